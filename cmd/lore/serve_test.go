package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/lore-cli/lore/internal/ollamatest"
)

func TestServeOffLoopbackNeedsAToken(t *testing.T) {
	e := newEnv(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8765", "example.com:80"} {
		r := e.run(false, "serve", "--addr", addr)
		if r.code != exitUsage || !strings.Contains(r.stderr, "serve-token") || !strings.Contains(r.stderr, "LORE_SERVE_TOKEN") {
			t.Errorf("serve --addr %s: exit %d: %s", addr, r.code, r.stderr)
		}
	}
}

// startServe runs `lore serve` as a process of its own on a free loopback
// port and returns it and its address, read from its first log line.
func startServe(t *testing.T, e *env, srv *ollamatest.Server, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, extra...)...)
	cmd.Env = []string{"LORE_TEST_MAIN=1", "OLLAMA_HOST=" + srv.URL, "LORE_RERANKER=none"}
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		var l struct{ Msg, Addr string }
		if json.Unmarshal(lines.Bytes(), &l) == nil && l.Msg == "listening" {
			go io.Copy(io.Discard, stderr)
			return cmd, l.Addr
		}
	}
	t.Fatalf("lore serve did not start")
	return nil, ""
}

func TestServeSIGTERMLetsTheStreamFinish(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	e := newEnv(t)
	srv := ollamatest.New(t)
	e.vars["OLLAMA_HOST"] = srv.URL
	if r := e.run(false, "index", sampleDocs(t)); r.code != 0 {
		t.Fatalf("index: %s", r.stderr)
	}
	srv.SetChat(ollamatest.ChatScript{Tokens: []string{"Run ", "make ", "install ", "[1]."}, TokenDelay: 200 * time.Millisecond})
	cmd, addr := startServe(t, e, srv)

	c := openai.NewClient(option.WithBaseURL(addr+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "lore",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("how do I install it?")}})
	var content strings.Builder
	signalled := false
	for stream.Next() {
		ch := stream.Current()
		if len(ch.Choices) > 0 {
			content.WriteString(ch.Choices[0].Delta.Content)
		}
		if !signalled && content.Len() > 0 {
			cmd.Process.Signal(syscall.SIGTERM)
			signalled = true
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("the stream broke at SIGTERM: %v", err)
	}
	if !strings.HasPrefix(content.String(), "Run make install [1].") || !strings.Contains(content.String(), "Sources:") {
		t.Errorf("the stream did not finish:\n%s", content.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("lore serve after SIGTERM: %v (want exit 0)", err)
	}
}
