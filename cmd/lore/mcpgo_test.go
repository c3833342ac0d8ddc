package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	m3 "github.com/mark3labs/mcp-go/mcp"
)

// TestMCPGoClient drives lore mcp --http with mark3labs/mcp-go's client,
// the second most used Go MCP library: its default client speaks the
// sessionless protocol (server/discover, then every request on its own),
// which the SDK's stateful handler listed and then refused with -32022.
// Pinned to the versions with sessions it takes the other handler.
//
// By default it runs on the handler in this process; with LORE_E2E_LORE
// set to a lore binary (make e2e) it starts `lore mcp --http` with the
// environment it was given, against a real Ollama.
func TestMCPGoClient(t *testing.T) {
	endpoint, query := mcpGoTarget(t)
	for _, c := range []struct {
		name string
		opts []mcpgo.ClientOption
	}{
		{"default client", nil},
		{"legacy protocol", []mcpgo.ClientOption{mcpgo.WithProtocolVersion("2025-11-25")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			tr, err := transport.NewStreamableHTTP(endpoint)
			if err != nil {
				t.Fatal(err)
			}
			client := mcpgo.NewClient(tr, c.opts...)
			var mu sync.Mutex
			var progress []string
			client.OnNotification(func(n m3.JSONRPCNotification) {
				if n.Method == "notifications/progress" {
					mu.Lock()
					progress = append(progress, n.Params.AdditionalFields["message"].(string))
					mu.Unlock()
				}
			})
			if err := client.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			init, err := client.Initialize(ctx, m3.InitializeRequest{Params: m3.InitializeParams{ClientInfo: m3.Implementation{Name: "lore-test", Version: "1"}}})
			if err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if init.ServerInfo.Name != "lore" {
				t.Errorf("server %+v", init.ServerInfo)
			}
			t.Logf("protocol %s", client.ProtocolVersion())
			tools, err := client.ListTools(ctx, m3.ListToolsRequest{})
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if strings.Join(names, " ") != "ask get_passage index_status list_indexes search" {
				t.Errorf("tools %v", names)
			}
			call := func(name string, args map[string]any, meta *m3.Meta) map[string]any {
				t.Helper()
				req := m3.CallToolRequest{Params: m3.CallToolParams{Name: name, Arguments: args}}
				req.Params.Meta = meta
				res, err := client.CallTool(ctx, req)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if res.IsError {
					t.Fatalf("%s: %+v", name, res.Content)
				}
				var out map[string]any
				b, _ := json.Marshal(res.StructuredContent)
				json.Unmarshal(b, &out)
				return out
			}
			out := call("search", map[string]any{"query": query, "k": 3}, nil)
			results, _ := out["results"].([]any)
			if len(results) == 0 || len(results) > 3 {
				t.Errorf("search: %v", out)
			}
			resources, err := client.ListResources(ctx, m3.ListResourcesRequest{})
			if err != nil || len(resources.Resources) == 0 {
				t.Fatalf("resources/list: %v %+v", err, resources)
			}
			read, err := client.ReadResource(ctx, m3.ReadResourceRequest{Params: m3.ReadResourceParams{URI: resources.Resources[0].URI}})
			if err != nil || len(read.Contents) == 0 {
				t.Fatalf("resources/read %s: %v", resources.Resources[0].URI, err)
			}
			answer := call("ask", map[string]any{"question": query}, &m3.Meta{ProgressToken: "ask-1"})
			if answer["route"] == nil || answer["mode"] != "offline" {
				t.Errorf("ask: %v", answer)
			}
			// Notifications are handled apart from the reply: the last may
			// land just after it.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				mu.Lock()
				got := slices.Contains(progress, "retrieve")
				mu.Unlock()
				if got {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Contains(progress, "retrieve") {
				t.Errorf("ask's progress: %v", progress)
			}
		})
	}
}

// mcpGoTarget is the endpoint to test and a question its index answers.
func mcpGoTarget(t *testing.T) (string, string) {
	lore := os.Getenv("LORE_E2E_LORE")
	if lore == "" {
		return mcpHTTP(t, "").URL + "/mcp", "make install"
	}
	cmd := exec.Command(lore, "mcp", "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM) // only the process this test started
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var l struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "listening" {
				addr <- l.Addr
			}
		}
	}()
	select {
	case a := <-addr:
		return a, "how do I keep lore from indexing a folder?"
	case <-time.After(time.Minute):
		t.Fatal("lore mcp --http did not say where it listens within a minute")
	}
	return "", ""
}
