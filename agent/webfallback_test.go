package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Online, nothing in the documents and the web search failing: the turn
// is decided as offline (not in the docs), says why, and the model is
// never handed an empty source list (issue 34, item 3).
func TestFailedWebSearchWithNothingMatched(t *testing.T) {
	for name, web := range map[string]WebSearcher{
		"failing": fakeWeb{err: errors.New("dial tcp 127.0.0.1:1: connection refused")},
		"empty":   fakeWeb{},
	} {
		t.Run(name, func(t *testing.T) {
			chat := &fakeChat{answer: []string{"Paris [1][2]."}}
			a := &Agent{Config: Config{Model: "m", Mode: Online, TopK: 3}, Retriever: &fakeRetriever{}, Web: web, Chat: chat}
			_, res, last := collect(t, a, context.Background(), Turn{Question: "what is the capital of France?"})
			if _, ok := last.(Done); !ok {
				t.Fatalf("ended with %T", last)
			}
			if res.Route != RouteNone || res.Answer != NotInDocsNone || len(res.Sources) != 0 {
				t.Errorf("route %q answer %q sources %d, want %q, not in the docs, none", res.Route, res.Answer, len(res.Sources), RouteNone)
			}
			if !strings.Contains(res.Notice, "answered as offline") {
				t.Errorf("notice %q does not say the turn fell back to offline", res.Notice)
			}
			if n := len(chat.requests()); n != 0 {
				t.Errorf("the model was asked %d times with nothing to answer from", n)
			}
		})
	}
}
