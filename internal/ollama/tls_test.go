package ollama

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// An https:// host that cannot talk TLS with lore is unreachable to lore,
// not a bare client error: the callers' fallbacks key on ErrUnreachable
// (issue 34, item 4). A plain-HTTP Ollama says to use http://.
func TestTLSFailuresAreUnreachable(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Ollama is running")) })
	plain := httptest.NewServer(ok)
	defer plain.Close()
	selfSigned := httptest.NewTLSServer(ok)
	defer selfSigned.Close()
	for name, c := range map[string]struct{ url, says string }{
		"plain HTTP":  {strings.Replace(plain.URL, "http://", "https://", 1), "answered in plain HTTP"},
		"self-signed": {selfSigned.URL, "certificate"},
	} {
		t.Run(name, func(t *testing.T) {
			u, _ := url.Parse(c.url)
			err := NewClient(u, nil, Timeouts{}).Heartbeat(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			if !IsUnreachable(err) || Transient(err) {
				t.Errorf("IsUnreachable %v, Transient %v for %v", IsUnreachable(err), Transient(err), err)
			}
			ex := Explain(err, u.Host, "")
			if !errors.Is(ex, ErrUnreachable) || !strings.Contains(ex.Error(), c.says) || !strings.Contains(ex.Error(), "http://") {
				t.Errorf("explained: %v", ex)
			}
		})
	}
}
