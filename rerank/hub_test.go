package rerank

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hubServer is a Hugging Face double: the listing of org/m, and its files
// served by onnx (the ONNX file) and the others whole.
func hubServer(t *testing.T, onnx http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/models/org/m/revision/main":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `{"id":"org/m","siblings":[{"rfilename":"config.json"},{"rfilename":"tokenizer.json"},{"rfilename":"onnx/model.onnx"}]}`)
		case "/org/m/resolve/main/onnx/model.onnx":
			onnx(w, r)
		default:
			io.WriteString(w, "{}")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A download is bounded: a file larger than its cap, declared or not, and
// one that stops sending, end in one line naming the host, never the token
// (issue 23, item 1).
func TestHubDownloadIsBounded(t *testing.T) {
	const token = "hf_SECRET_token"
	endless := func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	for name, tt := range map[string]struct {
		onnx http.HandlerFunc
		want string
	}{
		"endless": {endless, "more than 1.0 MiB: stopped"},
		"declared too large": {func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "3000000000")
			w.WriteHeader(http.StatusOK)
		}, "offers 2.8 GiB for model.onnx, more than the 1.0 MiB lore takes"},
		"stalled": {func(w http.ResponseWriter, r *http.Request) {
			w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, "nothing came for 200ms"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := hubServer(t, tt.onnx)
			h := HFHub{Endpoint: srv.URL, Token: token, MaxModel: 1 << 20, Stall: 200 * time.Millisecond}
			files, err := h.Files(context.Background(), "org/m")
			if err != nil || len(files) != 3 {
				t.Fatalf("Files = %q, %v", files, err)
			}
			_, err = h.Download(context.Background(), "org/m", "onnx/model.onnx", t.TempDir())
			host := strings.TrimPrefix(srv.URL, "http://")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), host) || strings.Contains(err.Error(), token) {
				t.Fatalf("err = %v, want %q naming %s", err, tt.want, host)
			}
		})
	}
}

// A whole download lands flat in one folder.
func TestHubDownload(t *testing.T) {
	srv := hubServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "onnx bytes") })
	dir, err := HFHub{Endpoint: srv.URL}.Download(context.Background(), "org/m", "onnx/model.onnx", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"model.onnx", "config.json", "tokenizer.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// A web page where the listing should be (a proxy, a login page) is said
// to be one.
func TestHubHTMLListing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>Sign in</html>")
	}))
	defer srv.Close()
	if _, err := (HFHub{Endpoint: srv.URL}).Files(context.Background(), "org/m"); err == nil || !strings.Contains(err.Error(), "web page") {
		t.Fatalf("err = %v", err)
	}
}
