// Package ollamatest is a test double of the Ollama server: an httptest
// server that answers the endpoints lore uses with the JSON the real server
// writes, records what it was asked, and can be told to fail or stall.
package ollamatest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
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
	// Version is what /api/version answers.
	Version string
	// ContextLength gives models a "<arch>.context_length" in /api/show's
	// model_info, as the real server reads it from the GGUF; a model not
	// listed has no model_info.
	ContextLength map[string]int
	// Running are the models /api/ps lists as loaded.
	Running []string

	streaming atomic.Int32 // /api/chat requests being answered now

	mu          sync.Mutex
	inputs      [][]string
	embedNumCtx []int
	delay       time.Duration
	chats       []ChatRequest
	script      ChatScript
	// abandoned counts the chats whose client went away mid-answer.
	abandoned atomic.Int32
}

// Abandoned is how many chat answers their client stopped before the end:
// a cancelled generation is one that Ollama sees closed.
func (s *Server) Abandoned() int { return int(s.abandoned.Load()) }

// ChatScript says how /api/chat answers.
type ChatScript struct {
	Tokens     []string      // streamed one per line
	FailAfter  int           // after this many tokens, an error object (0: never)
	HTML502    bool          // answer a proxy's HTML error page instead
	FirstDelay time.Duration // wait before the first token
	Hang       bool          // after the first token, wait for the client to go away
	TokenDelay time.Duration // wait between tokens
}

// ChatRequest is what a client sent to /api/chat.
type ChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Stream  *bool           `json:"stream"`
	Format  json.RawMessage `json:"format"`
	Options map[string]any  `json:"options"`
}

// SetChat scripts the following /api/chat answers.
func (s *Server) SetChat(c ChatScript) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = c
}

// Streaming is how many /api/chat requests are being answered now: a
// client that goes away ends its own (the handler sees its request's
// context end).
func (s *Server) Streaming() int { return int(s.streaming.Load()) }

// Chats returns the /api/chat requests so far.
func (s *Server) Chats() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.chats...)
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
	s := &Server{Models: map[string]int{"nomic-embed-text:latest": 8, "all-minilm:latest": 4, "llama3.2:3b": 0}, Version: "0.17.4",
		script: ChatScript{Tokens: []string{"Use ", "WithTimeout", " [1]."}}}
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

// EmbedNumCtx returns the num_ctx option of every /api/embed request so
// far (0 when absent), in order.
func (s *Server) EmbedNumCtx() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.embedNumCtx...)
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

func (s *Server) contextLength(name string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.ContextLength[name]; ok {
		return n, true
	}
	if !strings.Contains(name, ":") {
		n, ok := s.ContextLength[name+":latest"]
		return n, ok
	}
	return 0, false
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// maxRequest bounds what the double reads of a request, as a real server
// would: a runaway client in a test fails its decode instead of growing
// the test process.
const maxRequest = 64 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxRequest)
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
		resp := map[string]any{"modelfile": "", "parameters": "", "template": "{{ .Prompt }}", "details": map[string]string{"format": "gguf", "family": "nomic-bert"}}
		if n, ok := s.contextLength(req.Model); ok {
			resp["model_info"] = map[string]any{"general.architecture": "llama", "llama.context_length": n}
		}
		json.NewEncoder(w).Encode(resp)
	case "/api/version":
		s.mu.Lock()
		v := s.Version
		s.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]string{"version": v})
	case "/api/ps": // the loaded models, as `ollama ps` reads them
		type running struct {
			Name          string    `json:"name"`
			Model         string    `json:"model"`
			Size          int64     `json:"size"`
			ExpiresAt     time.Time `json:"expires_at"`
			SizeVRAM      int64     `json:"size_vram"`
			ContextLength int       `json:"context_length"`
		}
		list := struct {
			Models []running `json:"models"`
		}{Models: []running{}}
		s.mu.Lock()
		names := append([]string(nil), s.Running...)
		s.mu.Unlock()
		for _, n := range names {
			list.Models = append(list.Models, running{Name: n, Model: n, Size: 1 << 30, ExpiresAt: time.Now().Add(5 * time.Minute), ContextLength: 4096})
		}
		json.NewEncoder(w).Encode(list)
	case "/api/tags": // the installed models, as `ollama list` reads them
		s.mu.Lock()
		names := make([]string, 0, len(s.Models))
		for n := range s.Models {
			names = append(names, n)
		}
		s.mu.Unlock()
		sort.Strings(names)
		type model struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		}
		var list struct {
			Models []model `json:"models"`
		}
		for _, n := range names {
			list.Models = append(list.Models, model{n, n})
		}
		json.NewEncoder(w).Encode(list)
	case "/api/embed":
		s.embed(w, r)
	case "/api/chat":
		s.chat(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model   string
		Input   any
		Options map[string]any
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
	numCtx, _ := req.Options["num_ctx"].(float64)
	s.mu.Lock()
	s.inputs = append(s.inputs, inputs)
	s.embedNumCtx = append(s.embedNumCtx, int(numCtx))
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

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.streaming.Add(1)
	defer s.streaming.Add(-1)
	var req ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	s.chats = append(s.chats, req)
	script := s.script
	s.mu.Unlock()
	if _, ok := s.model(req.Model); !ok {
		writeError(w, http.StatusNotFound, `model "`+req.Model+`" not found, try pulling it first`)
		return
	}
	if script.HTML502 {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"))
		return
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if req.Stream != nil && !*req.Stream {
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "created_at": now, "done": true, "done_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": strings.Join(script.Tokens, "")}, "prompt_eval_count": 10, "eval_count": len(script.Tokens)})
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	select {
	case <-time.After(script.FirstDelay):
	case <-r.Context().Done():
		s.abandoned.Add(1)
		return
	}
	for i, tok := range script.Tokens {
		if i > 0 && script.TokenDelay > 0 {
			select {
			case <-time.After(script.TokenDelay):
			case <-r.Context().Done():
				s.abandoned.Add(1)
				return
			}
		}
		if script.FailAfter > 0 && i == script.FailAfter {
			enc.Encode(map[string]string{"error": "an error was encountered while running the model: unexpected EOF"})
			flusher.Flush()
			return
		}
		enc.Encode(map[string]any{"model": req.Model, "created_at": now, "done": false, "message": map[string]string{"role": "assistant", "content": tok}})
		flusher.Flush()
		if script.Hang && i == 0 {
			<-r.Context().Done()
			s.abandoned.Add(1)
			return
		}
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(m.Content) / 4
	}
	enc.Encode(map[string]any{"model": req.Model, "created_at": now, "done": true, "done_reason": "stop",
		"message": map[string]string{"role": "assistant", "content": ""}, "total_duration": 1234567, "load_duration": 2345,
		"prompt_eval_count": prompt, "prompt_eval_duration": 1000, "eval_count": len(script.Tokens), "eval_duration": 1000})
	flusher.Flush()
}

// ClosedAddr is a loopback host:port where nothing listens: a connection
// to it is refused at once, as to a stopped Ollama.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
