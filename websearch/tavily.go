package websearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// TavilyURL is Tavily's search endpoint.
const TavilyURL = "https://api.tavily.com/search"

// TavilyOptions configure the Tavily client.
type TavilyOptions struct {
	APIKey     string
	Depth      string // "basic" (default) or "advanced"
	MaxResults int    // default 5
	Timeout    time.Duration
	Endpoint   string // default TavilyURL; tests point it elsewhere
	Dial       DialFunc
}

// Tavily searches with the Tavily API.
type Tavily struct {
	opt    TavilyOptions
	client *http.Client
}

// NewTavily returns a Tavily client; an empty key is an error that says
// where a key goes.
func NewTavily(opt TavilyOptions) (*Tavily, error) {
	if opt.APIKey == "" {
		return nil, missingKey{"no Tavily API key: set TAVILY_API_KEY or tavily-api-key (or web-provider: searxng)"}
	}
	if opt.Depth == "" {
		opt.Depth = "basic"
	}
	if opt.Depth != "basic" && opt.Depth != "advanced" {
		return nil, fmt.Errorf("tavily search depth %q is not basic or advanced", opt.Depth)
	}
	if opt.MaxResults <= 0 {
		opt.MaxResults = 5
	}
	if opt.Endpoint == "" {
		opt.Endpoint = TavilyURL
	}
	return &Tavily{opt: opt, client: httpClient(opt.Timeout, opt.Dial)}, nil
}

func (t *Tavily) Name() string { return "tavily" }

// Search posts the query; the key travels in the Authorization header and
// appears in no error or log.
func (t *Tavily) Search(ctx context.Context, query string) ([]Result, error) {
	body, _ := json.Marshal(map[string]any{
		"query":        query,
		"search_depth": t.opt.Depth,
		"max_results":  t.opt.MaxResults,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.opt.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.opt.APIKey)
	host := endpointHost(t.opt.Endpoint)
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, transportError("Tavily", host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusError("Tavily", resp, "check TAVILY_API_KEY / tavily-api-key")
	}
	var out struct {
		Results []Result `json:"results"`
	}
	if err := readJSON("Tavily", host, resp, &out); err != nil {
		return nil, err
	}
	return clean(out.Results, t.opt.MaxResults), nil
}

func endpointHost(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// clean drops results without a URL and keeps at most max.
func clean(rs []Result, max int) []Result {
	out := make([]Result, 0, len(rs))
	for _, r := range rs {
		if r.URL != "" && len(out) < max {
			out = append(out, r)
		}
	}
	return out
}
