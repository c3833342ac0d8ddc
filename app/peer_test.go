package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/internal/ollama"
)

// A hung Ollama is told within the reply deadline as unreachable, naming
// the host: the chat's banner and its sources-only turn follow (issue 23,
// item 3). It was the raw "context deadline exceeded" after 10 s, which
// the chat showed as is.
func TestChatStatusOfAHungOllama(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	defer func(d time.Duration) { ollama.ReplyTimeout = d }(ollama.ReplyTimeout)
	ollama.ReplyTimeout = 300 * time.Millisecond
	e, err := Open(Options{Config: testConfig(t, srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = e.ChatStatus(ctx, "llama3.2:3b")
	if ctx.Err() != nil || !errors.Is(err, ollama.ErrUnreachable) || !strings.Contains(err.Error(), "Ollama at "+srv.URL+" did not answer within 300ms") {
		t.Fatalf("err = %v", err)
	}
	if !SetupProblem(err) {
		t.Error("a hung Ollama does not point to lore doctor")
	}
}
