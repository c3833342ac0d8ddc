package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/lore-cli/lore/internal/units"
)

// Caps and deadlines of a download from the hub.
const (
	// MaxModelFile caps an ONNX file: the cross-encoders lore runs are
	// 20-600 MB in fp32; ONNX's own protobuf limit is 2 GiB.
	MaxModelFile = 2 << 30
	// MaxSmallFile caps a tokenizer or config file (a multilingual
	// tokenizer.json is about 20 MB).
	MaxSmallFile = 64 << 20
	// maxInfo caps the repository listing.
	maxInfo = 4 << 20
	// DefaultStall ends a download when no byte came for this long; a
	// download may take as long as it needs while bytes flow.
	DefaultStall = time.Minute
	// headerTimeout bounds the wait for a reply's headers.
	headerTimeout = 30 * time.Second
)

// HFHub is Hugging Face (or HF_ENDPOINT) over plain HTTP, every reply
// bounded in size, and a download that stalls ended.
type HFHub struct {
	// Endpoint is the hub's address ("": HF_ENDPOINT, else
	// https://huggingface.co).
	Endpoint string
	// Token is sent as a bearer token (HF_TOKEN), and never shown.
	Token string
	// Dial dials connections (nil: directly).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxModel, MaxSmall and Stall override MaxModelFile, MaxSmallFile and
	// DefaultStall (tests shrink them).
	MaxModel, MaxSmall int64
	Stall              time.Duration
}

func (h HFHub) endpoint() string {
	e := h.Endpoint
	if e == "" {
		e = os.Getenv("HF_ENDPOINT")
	}
	if e == "" {
		e = "https://huggingface.co"
	}
	return strings.TrimSuffix(e, "/")
}

func (h HFHub) host() string {
	if u, err := url.Parse(h.endpoint()); err == nil && u.Host != "" {
		return u.Host
	}
	return h.endpoint()
}

func (h HFHub) client() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = headerTimeout
	if h.Dial != nil {
		tr.DialContext = h.Dial
	}
	return &http.Client{Transport: tr}
}

// get starts a GET of url and checks the status and the declared length.
func (h HFHub) get(ctx context.Context, c *http.Client, u string, limit int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once, below, without a query
		}
		return nil, fmt.Errorf("%s did not answer for %s: %w", h.host(), path.Base(req.URL.Path), err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		resp.Body.Close()
		return nil, fmt.Errorf("%s has no %s (404): check the model's name", h.host(), req.URL.Path)
	case resp.StatusCode != http.StatusOK:
		resp.Body.Close()
		return nil, fmt.Errorf("%s answered %s for %s", h.host(), resp.Status, req.URL.Path)
	case resp.ContentLength > limit:
		resp.Body.Close()
		return nil, fmt.Errorf("%s offers %s for %s, more than the %s lore takes", h.host(), units.Bytes(resp.ContentLength), path.Base(req.URL.Path), units.Bytes(limit))
	}
	return resp, nil
}

// Files lists the files of repository name.
func (h HFHub) Files(ctx context.Context, name string) ([]string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	resp, err := h.get(ctx, h.client(), h.endpoint()+"/api/models/"+name+"/revision/main", maxInfo)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
		return nil, fmt.Errorf("%s answered %s with a web page, not the model's listing: check HF_ENDPOINT (a proxy or a login page?)", h.host(), resp.Status)
	}
	var info struct {
		Siblings []struct {
			Name string `json:"rfilename"`
		} `json:"siblings"`
	}
	r := &stalling{r: resp.Body, left: maxInfo, stall: h.stall(), ctx: ctx, cancel: cancel}
	defer r.stop()
	if err := json.NewDecoder(r).Decode(&info); err != nil {
		if r.err != nil {
			err = r.err
		}
		return nil, fmt.Errorf("%s sent a listing of %s lore cannot read: %s", h.host(), name, h.why(err, maxInfo))
	}
	var files []string
	for _, s := range info.Siblings {
		files = append(files, s.Name)
	}
	return files, nil
}

// Download fetches the tokenizer and config files and onnxPath into
// dest/model, flat (onnx/model.onnx lands as model.onnx).
func (h HFHub) Download(ctx context.Context, name, onnxPath, dest string) (string, error) {
	files, err := h.Files(ctx, name)
	if err != nil {
		return "", err
	}
	want := []string{onnxPath}
	for _, f := range files {
		switch path.Base(f) {
		case "tokenizer.json", "special_tokens_map.json", "tokenizer_config.json", "config.json", "vocab.txt":
			if !strings.Contains(f, "/") { // the model's own, not a subfolder's
				want = append(want, f)
			}
		}
	}
	dir := filepath.Join(dest, "model")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	c := h.client()
	for _, f := range want {
		limit := h.maxSmall()
		if strings.HasSuffix(f, ".onnx") {
			limit = h.maxModel()
		}
		if err := h.fetch(ctx, c, h.endpoint()+"/"+name+"/resolve/main/"+f, filepath.Join(dir, path.Base(f)), limit); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func (h HFHub) fetch(ctx context.Context, c *http.Client, u, to string, limit int64) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	resp, err := h.get(ctx, c, u, limit)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	defer out.Close()
	r := &stalling{r: resp.Body, left: limit, stall: h.stall(), ctx: ctx, cancel: cancel}
	defer r.stop()
	if _, err := io.Copy(out, r); err != nil {
		if r.err != nil {
			err = r.err
		}
		return fmt.Errorf("download %s from %s: %s", path.Base(to), h.host(), h.why(err, limit))
	}
	return out.Close()
}

func (h HFHub) why(err error, limit int64) string {
	switch {
	case errors.Is(err, errTooLarge):
		return "more than " + units.Bytes(limit) + ": stopped"
	case errors.Is(err, errStalled):
		return fmt.Sprintf("nothing came for %s: stopped (try again)", h.stall())
	}
	return err.Error()
}

func (h HFHub) stall() time.Duration {
	if h.Stall > 0 {
		return h.Stall
	}
	return DefaultStall
}

func (h HFHub) maxModel() int64 {
	if h.MaxModel > 0 {
		return h.MaxModel
	}
	return MaxModelFile
}

func (h HFHub) maxSmall() int64 {
	if h.MaxSmall > 0 {
		return h.MaxSmall
	}
	return MaxSmallFile
}

var (
	errTooLarge = errors.New("too large")
	errStalled  = errors.New("stalled")
)

// stalling reads at most left bytes and cancels the request when no byte
// has come for stall.
type stalling struct {
	r      io.Reader
	left   int64
	stall  time.Duration
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	err    error
}

func (s *stalling) Read(p []byte) (int, error) {
	if s.left <= 0 {
		s.err = errTooLarge
		return 0, s.err
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(s.stall, func() { s.cancel(errStalled) })
	} else {
		s.timer.Reset(s.stall)
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.timer.Stop()
	s.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) && context.Cause(s.ctx) == errStalled {
		s.err = errStalled
		err = errStalled
	}
	return n, err
}

func (s *stalling) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}
