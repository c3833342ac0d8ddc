package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/ollamatest"
)

// stdio runs a server over a StdioTransport on pipes, as lore mcp runs
// on a client's stdin and stdout.
type stdio struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func newStdio(t *testing.T, f *fixture) *stdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdio{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(nil, 16<<20)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		s.done <- New(f.eng, Options{}).Run(ctx, &StdioTransport{In: inR, Out: outW})
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-s.done
	})
	return s
}

func (s *stdio) send(lines ...string) {
	s.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.in, l+"\n"); err != nil {
			s.t.Fatalf("send %s: %v", l, err)
		}
	}
}

// reply is one message the server wrote.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// next is the next reply (notifications skipped), or false at the end.
func (s *stdio) next() (reply, bool) {
	s.t.Helper()
	for s.out.Scan() {
		var r reply
		if err := json.Unmarshal(s.out.Bytes(), &r); err != nil {
			s.t.Fatalf("the server wrote a line that is not JSON: %q", s.out.Text())
		}
		if r.Method == "" {
			return r, true
		}
	}
	return reply{}, false
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// TestStdioAnswersMalformedFramesAndGoesOn: one bad line used to end lore
// mcp (exit 1, no reply), and with it the client's whole session.
func TestStdioAnswersMalformedFramesAndGoesOn(t *testing.T) {
	f := newFixture(t, Options{})
	s := newStdio(t, f)
	s.send(initialize, initialized)
	if r, ok := s.next(); !ok || string(r.ID) != "1" || r.Result == nil {
		t.Fatalf("initialize: %+v", r)
	}
	for i, c := range []struct {
		line, id string
		code     int64
	}{
		{`{not json`, "null", -32700},
		{`[]`, "null", -32600},
		{`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, "null", -32600},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "null", -32600},
		{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, "7", -32600},
		{`{"id":8,"method":"ping"}`, "8", -32600},
		{`"just a string"`, "null", -32600},
		{`{"jsonrpc":"2.0","id":"x","method":"resources/read","params":{"uri":"lore://../x"}}`, `"x"`, -32602},
	} {
		s.send(c.line)
		r, ok := s.next()
		if !ok || r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id || r.Error.Message == "" {
			t.Errorf("%d %s: %+v %+v, want code %d id %s", i, c.line, r, r.Error, c.code, c.id)
		}
		s.send(`{"jsonrpc":"2.0","id":100,"method":"ping"}`)
		if r, ok := s.next(); !ok || string(r.ID) != "100" || r.Error != nil {
			t.Fatalf("after %s the session is gone: %+v", c.line, r)
		}
	}
	// A line past the bound is refused without being kept.
	s.send(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"` + strings.Repeat("a", defaultMaxMessage) + `"}}`)
	if r, ok := s.next(); !ok || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "longer than") {
		t.Errorf("an oversized line: %+v", r)
	}
	s.send(`{"jsonrpc":"2.0","id":101,"method":"ping"}`)
	if r, ok := s.next(); !ok || string(r.ID) != "101" {
		t.Fatalf("after an oversized line: %+v", r)
	}
}

// TestStdioAnswersWhatItReadBeforeTheInputEnded: printf '…' | lore mcp
// exited 0 with no reply at all.
func TestStdioAnswersWhatItReadBeforeTheInputEnded(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "WithTimeout."}, TokenDelay: 50 * time.Millisecond})
	s := newStdio(t, f)
	s.send(initialize, initialized,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"timeout"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","arguments":{"question":"How do I cancel after a timeout?"}}}`)
	s.in.Close()
	got := map[string]bool{}
	for {
		r, ok := s.next()
		if !ok {
			break
		}
		if r.Error != nil || r.Result == nil {
			t.Errorf("%s: %+v", r.ID, r.Error)
		}
		got[string(r.ID)] = true
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		if !got[id] {
			t.Errorf("request %s was read but never answered (answered: %v)", id, got)
		}
	}
	if err := <-s.done; err != nil {
		t.Errorf("the session ended with %v, want a clean end", err)
	}
	s.done <- nil // for the cleanup
}

// TestStdioSendsNothingForACancelledRequest: the spec says a receiver
// SHOULD NOT answer a request the sender cancelled.
func TestStdioSendsNothingForACancelledRequest(t *testing.T) {
	f := newFixture(t, Options{})
	f.ollama.SetChat(ollamatest.ChatScript{Tokens: []string{"Use ", "it"}, Hang: true})
	s := newStdio(t, f)
	s.send(initialize, initialized,
		`{"jsonrpc":"2.0","id":"ask","method":"tools/call","params":{"name":"ask","arguments":{"question":"How do I cancel after a timeout?"}}}`)
	if r, ok := s.next(); !ok || string(r.ID) != "1" {
		t.Fatalf("initialize: %+v", r)
	}
	// The ask is under way once Ollama streams it.
	for deadline := time.Now().Add(10 * time.Second); f.ollama.Streaming() == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"ask","reason":"user"}}`)
	for deadline := time.Now().Add(10 * time.Second); f.ollama.Streaming() > 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	if f.ollama.Streaming() > 0 {
		t.Fatal("the cancelled ask still runs")
	}
	s.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	s.in.Close()
	pinged := false
	for {
		r, ok := s.next()
		if !ok {
			break
		}
		pinged = pinged || string(r.ID) == "5"
		if string(r.ID) == `"ask"` {
			t.Errorf("the cancelled request was answered: %+v", r)
		}
	}
	if !pinged {
		t.Error("the ping after the cancellation was not answered")
	}
}
