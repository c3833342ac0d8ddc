package mcpserve

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzRequests sends what a client controls to a real server over a real
// engine: the resources/list cursor, the resources/read URI and the
// arguments of every read-only tool, decoded by the SDK against the
// tools' schemas and then by lore. A panic kills the test process as it
// would kill lore mcp; an error must carry a JSON-RPC code, and a call
// must end.
func FuzzRequests(f *testing.F) {
	fx := newFixture(f, Options{})
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, seed := range []struct {
		kind    uint8
		payload string
	}{
		{0, ""}, {0, enc(`{"i":"default","o":-1}`)}, {0, enc(`{"i":"default","o":1}`)}, {0, enc(`{"i":"zz","o":9223372036854775807}`)}, {0, "garbage!"},
		{1, "lore://default/timeouts.md"}, {1, "lore://../x"}, {1, "lore://default//etc/passwd"}, {1, "lore://default/%2e%2e/x"},
		{2, `{"query":"timeout","k":2}`}, {2, `{"query":"x","k":-1}`}, {2, `{"query":"","index":"../x"}`}, {2, `{"query":"x","k":1e300}`},
		{3, `{"question":"what is a timeout?"}`}, {3, `{"question":"x","online":true}`},
		{4, `{"path":"timeouts.md","start_line":2,"end_line":1}`}, {4, `{"path":"../../etc/passwd"}`}, {4, `{"path":"timeouts.md","start_line":9223372036854775807}`},
		{5, `{}`}, {6, `{"index":"default"}`}, {6, `{"index":"\u0000"}`}, {2, `[]`}, {2, `null`},
	} {
		f.Add(seed.kind, seed.payload)
	}
	tools := []string{"search", "ask", "get_passage", "list_indexes", "index_status"}
	srv := New(fx.eng, Options{})
	f.Fuzz(func(t *testing.T, kind uint8, payload string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// A session of its own, so that an input that kills one is the
		// input reported, not the next.
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "fuzz", Version: "v0"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			cs.Close()
			ss.Wait()
		}()
		switch k := int(kind) % (2 + len(tools)); k {
		case 0:
			_, err = cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: payload})
		case 1:
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: payload})
		default:
			if !json.Valid([]byte(payload)) {
				return // the client cannot send it; FuzzStdioFrames covers bytes that are not JSON
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools[k-2], Arguments: json.RawMessage(payload)})
		}
		if ctx.Err() != nil {
			t.Fatalf("kind %d %q: no answer in 30 s", kind, payload)
		}
		// The session outlives every request, whatever it held.
		if perr := cs.Ping(ctx, nil); perr != nil {
			t.Fatalf("kind %d %q: the session died: %v (the call said %v)", kind, payload, perr, err)
		}
		if err != nil {
			// JSON-RPC reserves -32768 to -32000; MCP's codes are in it too.
			if c := rpcCode(err); c < -32768 || c > -32000 {
				t.Fatalf("kind %d %q: %v: not a JSON-RPC error code (%d)", kind, payload, err, c)
			}
		}
	})
}

// FuzzStdioFrames writes any bytes as lines to lore mcp's stdio transport
// over a real server: every line it writes back must be JSON, and the
// session must still answer a ping after them.
func FuzzStdioFrames(f *testing.F) {
	fx := newFixture(f, Options{})
	srv := New(fx.eng, Options{})
	for _, seed := range []string{
		`{not json`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"1.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":5}`, `{"jsonrpc":"2.0","id":4,"result":{}}`, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"\u0000"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}`, "\r\n\r\n", `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, frames string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- srv.Run(ctx, &StdioTransport{In: inR, Out: outW})
			outW.Close()
		}()
		go func() {
			io.WriteString(inW, initialize+"\n"+initialized+"\n"+frames+"\n"+`{"jsonrpc":"2.0","id":"last","method":"ping"}`+"\n")
			inW.Close()
		}()
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		pinged := false
		for sc.Scan() {
			var r reply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%q: the server wrote a line that is not JSON: %q", frames, sc.Text())
			}
			pinged = pinged || (string(r.ID) == `"last"` && r.Error == nil)
		}
		<-done
		if ctx.Err() != nil {
			t.Fatalf("%q: no end in 30 s", frames)
		}
		if !pinged {
			t.Fatalf("%q: the ping after it was not answered", frames)
		}
	})
}
