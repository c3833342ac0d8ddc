package websearch

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SearXNGOptions configure a SearXNG client.
type SearXNGOptions struct {
	URL        string // the instance, e.g. http://searx.internal:8080
	MaxResults int
	Timeout    time.Duration
	Dial       DialFunc
}

// SearXNG searches a self-hosted SearXNG instance through its JSON API.
type SearXNG struct {
	opt    SearXNGOptions
	base   *url.URL
	client *http.Client
}

// NewSearXNG checks the instance URL and returns a client.
func NewSearXNG(opt SearXNGOptions) (*SearXNG, error) {
	if opt.URL == "" {
		return nil, fmt.Errorf("%w: no SearXNG instance: set searxng-url", ErrUnavailable)
	}
	u, err := url.Parse(opt.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("searxng-url %q is not an http(s) URL", opt.URL)
	}
	if opt.MaxResults <= 0 {
		opt.MaxResults = 5
	}
	return &SearXNG{opt: opt, base: u, client: httpClient(opt.Timeout, opt.Dial)}, nil
}

func (s *SearXNG) Name() string { return "searxng" }

func (s *SearXNG) Search(ctx context.Context, query string) ([]Result, error) {
	u := *s.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, transportError("SearXNG", s.base.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden {
		return nil, fmt.Errorf("%w: SearXNG at %s refused the JSON API (403): add json to search.formats in its settings.yml", ErrUnavailable, s.base.Host)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, statusError("SearXNG", resp, "check the instance's access settings")
	}
	var out struct {
		Results []Result `json:"results"`
	}
	if err := readJSON("SearXNG", s.base.Host, resp, &out); err != nil {
		return nil, err
	}
	return clean(out.Results, s.opt.MaxResults), nil
}
