// Package websearch asks a web search service for pages about a query:
// Tavily (a hosted API) or a self-hosted SearXNG instance, for teams that
// cannot send queries to a SaaS. It is only ever built in online mode.
package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"
)

// Result is one web page found.
type Result struct {
	URL     string  `json:"url"`
	Title   string  `json:"title"`
	Content string  `json:"content"`
	Score   float64 `json:"score"`
}

// Searcher finds pages for a query.
type Searcher interface {
	// Name is "tavily" or "searxng".
	Name() string
	Search(ctx context.Context, query string) ([]Result, error)
}

// ErrAuth means the service refused the credentials; ErrRateLimited that
// it asked us to slow down; ErrUnavailable that it failed or was unreachable.
var (
	ErrAuth        = errors.New("web search refused the credentials")
	ErrRateLimited = errors.New("web search rate limit reached")
	ErrUnavailable = errors.New("web search unavailable")
)

// missingKey is a credential that was never given: it is ErrAuth (the
// fix is the same, set the key) without saying that a key was refused.
type missingKey struct{ msg string }

func (e missingKey) Error() string        { return e.msg }
func (e missingKey) Is(target error) bool { return target == ErrAuth }

// DialFunc dials a network address; tests and the offline guard wrap it.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func httpClient(timeout time.Duration, dial DialFunc) *http.Client {
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if dial != nil {
		tr.DialContext = dial
	}
	return &http.Client{Timeout: timeout, Transport: tr}
}

// MaxReply caps what lore reads of a search reply: a page of results with
// their snippets is tens of KiB.
const MaxReply = 4 << 20

// readJSON decodes a 200 reply into v, refusing a web page (a login page,
// a captive portal) and a reply past MaxReply, in a line naming the host.
func readJSON(service, host string, resp *http.Response, v any) error {
	ct := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); mt == "text/html" || mt == "application/xhtml+xml" {
		return fmt.Errorf("%w: %s at %s answered %s with %s, not search results: check the address (a proxy or a login page?)", ErrUnavailable, service, host, resp.Status, ct)
	}
	if resp.ContentLength > MaxReply {
		return tooLarge(service, host)
	}
	r := &capped{r: resp.Body, left: MaxReply}
	if err := json.NewDecoder(r).Decode(v); err != nil {
		if r.over {
			return tooLarge(service, host)
		}
		return fmt.Errorf("%w: %s at %s sent an answer lore cannot read: %v", ErrUnavailable, service, host, err)
	}
	return nil
}

func tooLarge(service, host string) error {
	return fmt.Errorf("%w: %s at %s sent more than %d MiB: stopped reading", ErrUnavailable, service, host, MaxReply>>20)
}

// capped reads at most left bytes, and says whether the reply had more.
type capped struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.over = true
		return 0, errors.New("reply too large")
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// statusError turns an HTTP failure into an error that says what to do.
// The body is included (trimmed) because services explain themselves there;
// credentials are never part of it.
func statusError(service string, resp *http.Response, hint401 string) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	msg := strings.TrimSpace(string(body))
	var parsed struct {
		Detail any    `json:"detail"`
		Error  string `json:"error"`
	}
	if json.Unmarshal(body, &parsed) == nil {
		switch {
		case parsed.Error != "":
			msg = parsed.Error
		case parsed.Detail != nil:
			if d, ok := parsed.Detail.(map[string]any); ok && d["error"] != nil {
				msg = fmt.Sprint(d["error"])
			} else {
				msg = fmt.Sprint(parsed.Detail)
			}
		}
	}
	if strings.HasPrefix(strings.TrimSpace(msg), "<") {
		msg = "" // an HTML error page says nothing useful on one line
	}
	if msg != "" {
		msg = ": " + firstLine(msg)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: %s answered %d%s (%s)", ErrAuth, service, resp.StatusCode, msg, hint401)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == 432 || resp.StatusCode == 433:
		return fmt.Errorf("%w: %s answered %d%s (wait, or check your plan's limits)", ErrRateLimited, service, resp.StatusCode, msg)
	case resp.StatusCode >= 500:
		return fmt.Errorf("%w: %s answered %d%s (try again later)", ErrUnavailable, service, resp.StatusCode, msg)
	}
	return fmt.Errorf("%s answered %d%s", service, resp.StatusCode, msg)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// transportError explains a request that got no answer.
func transportError(service, host string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %s at %s did not answer in time", ErrUnavailable, service, host)
	}
	return fmt.Errorf("%w: cannot reach %s at %s: %v", ErrUnavailable, service, host, errors.Unwrap(err))
}
