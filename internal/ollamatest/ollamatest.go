// Package ollamatest is a test double of the Ollama server: an httptest
// server that answers the endpoints lore uses with the JSON the real server
// writes, records what it was asked, and can be told to fail or stall.
package ollamatest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Server is a fake Ollama. Set its fields before the requests they affect.
type Server struct {
	*httptest.Server

	// Models maps installed model names ("name:tag") to their embedding size.
	Models map[string]int
	// Fail makes the next Fail /api/embed requests answer 503.
	Fail atomic.Int32

	mu     sync.Mutex
	inputs [][]string
	delay  time.Duration
}

// SetDelay stalls every /api/embed response by d from now on.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// New starts a fake with nomic-embed-text (8 dimensions) and all-minilm (4)
// installed; it stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{Models: map[string]int{"nomic-embed-text:latest": 8, "all-minilm:latest": 4}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the input of every /api/embed request so far, in order.
func (s *Server) Requests() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.inputs...)
}

// EmbeddedInputs counts the texts embedded, leaving out lore's dimension probe.
func (s *Server) EmbeddedInputs() int {
	n := 0
	for _, r := range s.Requests() {
		for _, in := range r {
			if in != "dimension probe" {
				n++
			}
		}
	}
	return n
}

func (s *Server) model(name string) (int, bool) {
	if !strings.Contains(name, ":") {
		name += ":latest"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.Models[name]
	return d, ok
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch r.URL.Path {
	case "/":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("Ollama is running"))
	case "/api/show":
		var req struct{ Model string }
		json.NewDecoder(r.Body).Decode(&req)
		if _, ok := s.model(req.Model); !ok {
			writeError(w, http.StatusNotFound, "model '"+req.Model+"' not found")
			return
		}
		w.Write([]byte(`{"modelfile":"","parameters":"","template":"{{ .Prompt }}","details":{"format":"gguf","family":"nomic-bert"}}`))
	case "/api/embed":
		s.embed(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string
		Input any
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid input type")
		return
	}
	var inputs []string
	switch in := req.Input.(type) {
	case string:
		inputs = []string{in}
	case []any:
		for _, x := range in {
			str, _ := x.(string)
			inputs = append(inputs, str)
		}
	}
	s.mu.Lock()
	s.inputs = append(s.inputs, inputs)
	s.mu.Unlock()
	if s.Fail.Load() > 0 {
		s.Fail.Add(-1)
		writeError(w, http.StatusServiceUnavailable, "server busy, please try again.  maximum pending requests exceeded")
		return
	}
	dim, ok := s.model(req.Model)
	if !ok {
		writeError(w, http.StatusNotFound, `model "`+req.Model+`" not found, try pulling it first`)
		return
	}
	s.mu.Lock()
	delay := s.delay
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	resp := struct {
		Model           string      `json:"model"`
		Embeddings      [][]float32 `json:"embeddings"`
		TotalDuration   int64       `json:"total_duration"`
		LoadDuration    int64       `json:"load_duration"`
		PromptEvalCount int         `json:"prompt_eval_count"`
	}{Model: req.Model, TotalDuration: 14143917, LoadDuration: 1019500, PromptEvalCount: 8 * len(inputs)}
	for _, in := range inputs {
		v := Vector(in, dim)
		for i := range v {
			v[i] *= 3 // the real server normalises; lore must not rely on it
		}
		resp.Embeddings = append(resp.Embeddings, v)
	}
	json.NewEncoder(w).Encode(resp)
}

// Vector is a deterministic unit vector for text: equal texts get equal
// vectors, different texts unrelated ones.
func Vector(text string, dim int) []float32 {
	v := make([]float32, dim)
	seed := sha256.Sum256([]byte(text))
	var norm float64
	for i := range v {
		h := sha256.Sum256(append(seed[:], byte(i), byte(i>>8)))
		v[i] = float32(binary.LittleEndian.Uint32(h[:]))/math.MaxUint32 - 0.5
		norm += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}
