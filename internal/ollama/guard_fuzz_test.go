package ollama

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
)

// replay is a transport that answers every request with one body, without
// a network.
type replay struct {
	ctype string
	body  []byte
}

func (r replay) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {r.ctype}},
		Body: io.NopCloser(bytes.NewReader(r.body)), ContentLength: -1, Request: req}, nil
}

// FuzzChatStream: whatever a server streams, the guarded chat decode
// returns (no panic, no hang), hands on no more text than it was sent, and
// refuses a line past MaxStreamLine; a stream cut mid-line is an error.
func FuzzChatStream(f *testing.F) {
	f.Add([]byte(`{"message":{"content":"hi"},"done":false}` + "\n" + `{"done":true}` + "\n"))
	f.Add([]byte(`{"message":{"content":"hi"},"done":false}` + "\n" + `{"message":{"cont`))
	f.Add([]byte(`{"error":"model not found"}` + "\n"))
	f.Add([]byte("<html>\n<body>\n"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte(`{"message":{"content":"\u001b]52;c;aGk=\u0007"},"done":true}` + "\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		u, _ := url.Parse("http://127.0.0.1:11434")
		g := &guard{next: replay{"application/x-ndjson", body}, host: u.String(), t: Timeouts{Reply: ReplyTimeout, Embed: DefaultEmbedTimeout, FirstToken: DefaultFirstTokenTimeout}}
		hc := &http.Client{Transport: g}
		c := &Client{Client: api.NewClient(u, hc), hc: hc, base: u}
		var got strings.Builder
		err := c.Chat(context.Background(), &api.ChatRequest{Model: "m"}, func(r api.ChatResponse) error {
			got.WriteString(r.Message.Content)
			return nil
		})
		if got.Len() > len(body) {
			t.Fatalf("handed on %d bytes of text from %d sent", got.Len(), len(body))
		}
		longest := 0
		for _, line := range bytes.Split(body, []byte("\n")) {
			longest = max(longest, len(line))
		}
		if longest > MaxStreamLine && !errors.Is(err, ErrReplyTooLarge) {
			t.Fatalf("a line of %d bytes passed: %v", longest, err)
		}
		if len(body) > 0 && body[len(body)-1] != '\n' && err == nil {
			t.Fatal("a stream cut mid-line ended without an error")
		}
	})
}
