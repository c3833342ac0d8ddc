// Package config holds lore's settings and the rules that layer them:
// built-in defaults < YAML file < LORE_* environment < flags the user set.
package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is every setting lore reads. The yaml tag of a field is its key: the
// same kebab-case name is the YAML key, the flag name and, upper-cased with
// underscores and a LORE_ prefix, the environment variable.
type Config struct {
	// Index is the name of the index commands work on.
	Index string `yaml:"index"`

	// OllamaHost is where Ollama listens. OLLAMA_HOST is honoured when
	// neither the file nor LORE_OLLAMA_HOST sets it.
	OllamaHost string `yaml:"ollama-host"`

	// Embedder is "ollama" or "none" (a lexical-only index).
	Embedder string `yaml:"embedder"`
	// EmbedModel is the Ollama model used for embeddings.
	EmbedModel string `yaml:"embed-model"`
	// EmbedBatchSize is how many chunks go into one /api/embed request.
	EmbedBatchSize int `yaml:"embed-batch-size"`

	// MaxFileSize is the largest file indexed, in bytes; larger ones are skipped.
	MaxFileSize int64 `yaml:"max-file-size"`
	// FollowSymlinks lets the walk follow symbolic links that lead out of
	// a source; off, they are skipped with a reason (links inside a
	// source are always followed).
	FollowSymlinks bool `yaml:"follow-symlinks"`
	// ChunkSize is the chunk budget in bytes.
	ChunkSize int `yaml:"chunk-size"`
	// ChunkOverlap is how many bytes of the previous piece a split
	// section repeats, at most.
	ChunkOverlap int `yaml:"chunk-overlap"`

	// TopK is how many passages a search returns.
	TopK int `yaml:"top-k"`
	// SearchDepth is how many candidates BM25 and the vector graph each give.
	SearchDepth int `yaml:"search-depth"`
	// RRFK is the k of Reciprocal Rank Fusion.
	RRFK float64 `yaml:"rrf-k"`
	// Reranker is auto, onnxruntime, hugot or none.
	Reranker string `yaml:"reranker"`
	// RerankModel names an installed model; empty picks the backend's default.
	RerankModel string `yaml:"rerank-model"`
	// RerankCandidates is how many fused results the reranker scores
	// (0: 20 with ONNX Runtime, 10 on the pure-Go backend).
	RerankCandidates int `yaml:"rerank-candidates"`
	// RerankBatchSize is how many pairs run through the model at once (0: all candidates).
	RerankBatchSize int `yaml:"rerank-batch-size"`
	// RerankMaxTokens caps query + passage tokens (0: 384 with ONNX Runtime, 256 on the Go backend).
	RerankMaxTokens int `yaml:"rerank-max-tokens"`
	// ONNXRuntimeLib is the path of libonnxruntime.so (empty: standard places).
	ONNXRuntimeLib string `yaml:"onnxruntime-lib"`

	// Mode is offline (the Ollama host is the only network peer) or online
	// (a web search when the documents do not answer).
	Mode string `yaml:"mode"`
	// ChatModel is the Ollama model that writes answers.
	ChatModel string `yaml:"chat-model"`
	// JudgeModel is the Ollama model lore eval asks to judge answers
	// (faithfulness, relevancy); empty skips those metrics.
	JudgeModel string `yaml:"judge-model"`
	// NumCtx is the chat model's context window in tokens.
	NumCtx int `yaml:"num-ctx"`
	// Temperature is the chat model's sampling temperature.
	Temperature float64 `yaml:"temperature"`
	// KeepAlive is how long Ollama keeps the model loaded after a turn.
	KeepAlive string `yaml:"keep-alive"`
	// EmbedTimeout bounds one /api/embed request (a batch, or a query).
	EmbedTimeout string `yaml:"embed-timeout"`
	// FirstTokenTimeout bounds the wait for the first line of an answer
	// (loading the model, reading the prompt).
	FirstTokenTimeout string `yaml:"first-token-timeout"`
	// WebFallbackThreshold is the best rerank logit below which online mode
	// searches the web (and offline mode says "not in the docs").
	WebFallbackThreshold float64 `yaml:"web-fallback-threshold"`
	// WebProvider is tavily or searxng.
	WebProvider string `yaml:"web-provider"`
	// TavilyAPIKey is also read from TAVILY_API_KEY. It is never logged.
	TavilyAPIKey string `yaml:"tavily-api-key" secret:"true"`
	// SearXNGURL is a self-hosted SearXNG instance.
	SearXNGURL string `yaml:"searxng-url"`

	// ServeAddr is where `lore serve` listens (host:port).
	ServeAddr string `yaml:"serve-addr"`
	// ServeToken is the bearer token `lore serve` requires on its API;
	// required off loopback. Also read from LORE_SERVE_TOKEN. Never logged.
	ServeToken string `yaml:"serve-token" secret:"true"`
	// ServeCORSOrigins are the browser origins (comma-separated) allowed to
	// call `lore serve`; empty allows none.
	ServeCORSOrigins string `yaml:"serve-cors-origins"`
	// ServeMaxBody caps a request body of `lore serve`, in bytes.
	ServeMaxBody int64 `yaml:"serve-max-body"`
	// ServeShutdownTimeout is how long `lore serve` lets answers in flight
	// finish after SIGTERM.
	ServeShutdownTimeout string `yaml:"serve-shutdown-timeout"`
	// MaxOpenIndexes is how many indexes one process keeps open at once
	// (lore serve answers on several); the least recently used one that
	// no request is using is closed to open another.
	MaxOpenIndexes int `yaml:"max-open-indexes"`
	// ServeMaxConcurrent is how many answers are generated at once; query
	// embeddings run as many at once, the reranker one at a time.
	ServeMaxConcurrent int `yaml:"serve-max-concurrent"`
	// ServeQueue is how many requests may wait for a busy resource; past
	// it a request is refused at once ("lore is busy").
	ServeQueue int `yaml:"serve-queue"`
	// MCPMaxSessions is how many sessions `lore mcp --http` holds at once:
	// to open another, the least recently used idle one is closed.
	MCPMaxSessions int `yaml:"mcp-max-sessions"`
	// Watch lets the chat, lore serve and lore mcp keep the indexes they
	// have open in step with their files (one process writes an index at a
	// time; the others pick up what it wrote). --no-watch turns it off.
	Watch bool `yaml:"watch"`

	// Store is where indexes live: local (SQLite files under the data
	// folder) or weaviate (a Weaviate cluster, shared by a team).
	Store string `yaml:"store"`
	// WeaviateEndpoints are the cluster's HTTP endpoints, comma-separated
	// (http://host:8080,...): a dead one fails over to the next.
	WeaviateEndpoints string `yaml:"weaviate-endpoints"`
	// WeaviateGRPCEndpoints are the matching gRPC host:port list; empty
	// means each endpoint's host on port 50051.
	WeaviateGRPCEndpoints string `yaml:"weaviate-grpc-endpoints"`
	// WeaviateAPIKey authenticates to the cluster. Never logged.
	WeaviateAPIKey string `yaml:"weaviate-api-key" secret:"true"`
	// WeaviateCollectionPrefix starts the name of every collection lore
	// creates, so that several teams or setups share a cluster.
	WeaviateCollectionPrefix string `yaml:"weaviate-collection-prefix"`
	// WeaviateReplication is the replication factor of new collections;
	// 0 means min(3, nodes).
	WeaviateReplication int `yaml:"weaviate-replication"`
	// WeaviateConsistency is "WRITE,READ": the consistency levels of
	// writes and of reads (ONE, QUORUM or ALL).
	WeaviateConsistency string `yaml:"weaviate-consistency"`

	// Paths, not settable by file: they come from XDG variables.
	DataDir  string `yaml:"-"`
	StateDir string `yaml:"-"`
}

// Defaults returns the built-in settings.
func Defaults() Config {
	return Config{
		Index:             "default",
		OllamaHost:        "http://127.0.0.1:11434",
		Embedder:          "ollama",
		EmbedModel:        "nomic-embed-text",
		EmbedBatchSize:    32,
		MaxFileSize:       4 << 20,
		ChunkSize:         1500,
		ChunkOverlap:      200,
		TopK:              5,
		SearchDepth:       50,
		RRFK:              60,
		Reranker:          "auto",
		Mode:              "offline",
		ChatModel:         "llama3.2:3b",
		NumCtx:            8192,
		Temperature:       0.2,
		KeepAlive:         "5m",
		EmbedTimeout:      "2m",
		FirstTokenTimeout: "2m",
		WebProvider:       "tavily",

		ServeAddr:            "127.0.0.1:8765",
		ServeMaxBody:         1 << 20,
		ServeShutdownTimeout: "30s",
		MaxOpenIndexes:       4,
		ServeMaxConcurrent:   4,
		ServeQueue:           16,
		MCPMaxSessions:       64,
		Watch:                true,

		Store:                    "local",
		WeaviateCollectionPrefix: "Lore",
		WeaviateConsistency:      "QUORUM,ONE",
	}
}

// Flags is what the command line set: key to the flag's text, only for flags
// the user actually gave.
type Flags map[string]string

// Origin is the layer a setting's value came from.
type Origin string

const (
	FromDefault Origin = "default"
	FromFile    Origin = "file"
	FromEnv     Origin = "env"
	FromFlag    Origin = "flag"
)

// Source is where one setting's value came from: its layer and, for the
// environment, the variable (LORE_CHAT_MODEL, OLLAMA_HOST, TAVILY_API_KEY).
type Source struct {
	Origin Origin `json:"origin"`
	Name   string `json:"name,omitempty"`
}

// Loaded is a configuration with its provenance, for lore doctor.
type Loaded struct {
	Config Config
	// File is the config file read, or looked for when FileFound is false.
	File      string
	FileFound bool
	// FileErr is why the file could not be used (also in Problems).
	FileErr error
	// Origins has every key.
	Origins map[string]Source
	// Problems are every error Load met, in the order it met them; the
	// first is the one Load returns. A file that cannot be read or parsed
	// is left out whole, a bad environment value or flag is skipped, so
	// Config is the best configuration the sources allow.
	Problems []error
}

// Load layers the sources. file may be empty for the default location; a
// missing default file is fine, a missing explicit one is an error.
func Load(file string, env func(string) string, flags Flags) (Config, error) {
	l, err := LoadDetailed(file, env, flags)
	return l.Config, err
}

// LoadDetailed is Load, also saying where each setting came from. On an
// error it still returns the best configuration the valid sources give.
func LoadDetailed(file string, env func(string) string, flags Flags) (Loaded, error) {
	l := Loaded{Config: Defaults(), Origins: map[string]Source{}}
	c := &l.Config
	for _, k := range Keys() {
		l.Origins[k] = Source{Origin: FromDefault}
	}
	if h := env("OLLAMA_HOST"); h != "" {
		c.OllamaHost = h
		l.Origins["ollama-host"] = Source{FromEnv, "OLLAMA_HOST"}
	}
	explicit := file != ""
	l.File = File(file, env)
	fromFile := *c
	keys, err := fromFile.loadFile(l.File)
	switch {
	case err == nil:
		l.FileFound = true
		*c = fromFile
		for _, k := range keys {
			l.Origins[k] = Source{Origin: FromFile}
		}
	case explicit || !errors.Is(err, os.ErrNotExist):
		l.FileFound, l.FileErr = !errors.Is(err, os.ErrNotExist), err
		l.Problems = append(l.Problems, err)
	}
	for _, k := range Keys() {
		name := EnvName(k)
		if v := env(name); v != "" {
			if err := c.Set(k, v); err != nil {
				l.Problems = append(l.Problems, fmt.Errorf("%s: %w", name, err))
				continue
			}
			l.Origins[k] = Source{FromEnv, name}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(flags)) {
		if err := c.Set(k, flags[k]); err != nil {
			l.Problems = append(l.Problems, fmt.Errorf("--%s: %w", k, err))
			continue
		}
		l.Origins[k] = Source{Origin: FromFlag, Name: "--" + k}
	}
	data, okData := xdgDir(env, "XDG_DATA_HOME", ".local/share")
	state, okState := xdgDir(env, "XDG_STATE_HOME", ".local/state")
	c.DataDir, c.StateDir = filepath.Join(data, "lore"), filepath.Join(state, "lore")
	if !okData || !okState {
		// Without a home, the folders would be relative: indexes and logs
		// would land in whatever folder lore was started from.
		l.Problems = append(l.Problems, ErrNoHome)
	}
	if c.TavilyAPIKey == "" && env("TAVILY_API_KEY") != "" {
		c.TavilyAPIKey = env("TAVILY_API_KEY")
		l.Origins["tavily-api-key"] = Source{FromEnv, "TAVILY_API_KEY"}
	}
	if err := c.Validate(); err != nil {
		l.Problems = append(l.Problems, l.whereSet(err))
	}
	if len(l.Problems) > 0 {
		return l, l.Problems[0]
	}
	return l, nil
}

// whereSet adds to a Validate error, which names the key, where the bad
// value came from: LORE_CHUNK_SIZE=-1 would otherwise be reported as
// "chunk-size: -1 ..." to a user who never wrote chunk-size.
func (l Loaded) whereSet(err error) error {
	key, _, _ := strings.Cut(err.Error(), ":")
	switch src := l.Origins[key]; src.Origin {
	case FromEnv, FromFlag:
		return fmt.Errorf("%w (set by %s)", err, src.Name)
	case FromFile:
		return fmt.Errorf("%w (set in %s)", err, l.File)
	}
	return err
}

// Secret reports whether key holds a credential: its value is never shown
// or logged, only whether it is set.
func Secret(key string) bool {
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("yaml") == key {
			return t.Field(i).Tag.Get("secret") == "true"
		}
	}
	return false
}

// File is the config file lore reads: file when given (--config), else
// $XDG_CONFIG_HOME/lore/config.yaml.
func File(file string, env func(string) string) string {
	if file != "" {
		return file
	}
	dir, ok := xdgDir(env, "XDG_CONFIG_HOME", ".config")
	if !ok {
		return "" // no file rather than one in the working directory
	}
	return filepath.Join(dir, "lore", "config.yaml")
}

// ErrNoHome is the refusal to run without a home folder.
var ErrNoHome = errors.New("HOME is not set: set it, or set XDG_DATA_HOME and XDG_STATE_HOME to absolute folders for lore's indexes and log")

// xdgDir is the XDG base directory name, or HOME/fallback when it is unset
// or relative: the XDG spec says a relative path is invalid and is to be
// ignored (it would move lore's data with the working directory). ok is
// false when there is no home to fall back on.
func xdgDir(env func(string) string, name, fallback string) (dir string, ok bool) {
	if d := env(name); d != "" && filepath.IsAbs(d) {
		return d, true
	}
	home := env("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if !filepath.IsAbs(home) {
		return fallback, false
	}
	return filepath.Join(home, fallback), true
}

// loadFile sets what the YAML file at path holds and returns the keys it
// set.
func (c *Config) loadFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var raw map[string]yaml.Node
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("config %s is not valid YAML: %w", path, err)
	}
	keys := slices.Sorted(maps.Keys(raw))
	for _, k := range keys {
		node := raw[k]
		if _, ok := fieldByKey(c, k); !ok {
			return nil, fmt.Errorf("config %s: unknown key %q (see config.yaml for the keys lore reads)", path, k)
		}
		if node.Kind != yaml.ScalarNode {
			// A list or a map has no Value: taking "" would silently unset the key.
			return nil, fmt.Errorf("config %s: %s: expected one value, not a list or a map", path, k)
		}
		if err := c.Set(k, node.Value); err != nil {
			return nil, fmt.Errorf("config %s: %s: %w", path, k, err)
		}
	}
	return keys, nil
}

// Keys lists every settable key, in declaration order.
func Keys() []string {
	var keys []string
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		if k := t.Field(i).Tag.Get("yaml"); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

// EnvName is the environment variable for a key: web-provider is LORE_WEB_PROVIDER.
func EnvName(key string) string {
	return "LORE_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
}

func fieldByKey(c *Config, key string) (reflect.Value, bool) {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("yaml") == key && key != "-" {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// Set parses s into the setting named key.
func (c *Config) Set(key, s string) error {
	f, ok := fieldByKey(c, key)
	if !ok {
		return fmt.Errorf("unknown setting %q", key)
	}
	s = strings.TrimSpace(s)
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := parseSize(s)
		if err != nil && f.Kind() == reflect.Int64 {
			return fmt.Errorf("%q is not a size: give bytes, or a number with KB, MB, GB (or K, M, G) or KiB, MiB, GiB", s)
		}
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		f.SetInt(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		f.SetFloat(x)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		f.SetBool(b)
	default:
		return fmt.Errorf("setting %q has an unsupported type", key)
	}
	return nil
}

// parseSize reads whole numbers with an optional binary suffix (4MiB, 512KiB).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	// Longest first: "MiB" before "B". 10M is 10MB, as du, dd and most
	// tools read it; KiB, MiB and GiB are the binary units.
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000_000}, {"GB", 1000_000_000}, {"K", 1000}, {"M", 1000_000}, {"G", 1000_000_000}, {"B", 1}} {
		if len(s) > len(u.suffix) && strings.EqualFold(s[len(s)-len(u.suffix):], u.suffix) {
			s, mult = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

var indexName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckIndexName says what is wrong with an index name, nil if nothing.
func CheckIndexName(name string) error {
	if !indexName.MatchString(name) {
		return fmt.Errorf("%q is not a valid name: use letters, digits, '.', '_' or '-', starting with a letter or digit (at most 64)", name)
	}
	return nil
}

// Validate checks every setting and names the key of the first bad one.
func (c Config) Validate() error {
	// NaN passes every range check below (each comparison is false) and
	// Inf passes the one-sided ones, so non-finite numbers are refused first.
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Float64 && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)) {
			return fmt.Errorf("%s: %g is not a finite number", v.Type().Field(i).Tag.Get("yaml"), f.Float())
		}
	}
	switch {
	case CheckIndexName(c.Index) != nil:
		return fmt.Errorf("index: %w", CheckIndexName(c.Index))
	case c.Embedder != "ollama" && c.Embedder != "none":
		return fmt.Errorf("embedder: %q is not one of ollama, none", c.Embedder)
	case c.Embedder == "ollama" && c.EmbedModel == "":
		return errors.New("embed-model: empty: name an Ollama embedding model such as nomic-embed-text")
	case c.EmbedBatchSize < 1 || c.EmbedBatchSize > 1024:
		return fmt.Errorf("embed-batch-size: %d is outside 1..1024", c.EmbedBatchSize)
	case c.MaxFileSize < 1:
		return fmt.Errorf("max-file-size: %d must be positive", c.MaxFileSize)
	case c.ChunkSize < 200 || c.ChunkSize > 20000:
		return fmt.Errorf("chunk-size: %d is outside 200..20000 bytes", c.ChunkSize)
	case c.ChunkOverlap < 0 || c.ChunkOverlap >= c.ChunkSize/2:
		return fmt.Errorf("chunk-overlap: %d must be between 0 and half of chunk-size", c.ChunkOverlap)
	case c.TopK < 1 || c.TopK > 100:
		return fmt.Errorf("top-k: %d is outside 1..100", c.TopK)
	case c.SearchDepth < 1 || c.SearchDepth > 1000:
		return fmt.Errorf("search-depth: %d is outside 1..1000", c.SearchDepth)
	case c.RRFK <= 0:
		return fmt.Errorf("rrf-k: %g must be positive", c.RRFK)
	case c.Reranker != "auto" && c.Reranker != "onnxruntime" && c.Reranker != "hugot" && c.Reranker != "none":
		return fmt.Errorf("reranker: %q is not one of auto, onnxruntime, hugot, none", c.Reranker)
	case c.RerankCandidates < 0 || c.RerankCandidates > 200:
		return fmt.Errorf("rerank-candidates: %d is outside 0..200", c.RerankCandidates)
	case c.RerankBatchSize < 0 || c.RerankBatchSize > 256:
		return fmt.Errorf("rerank-batch-size: %d is outside 0..256", c.RerankBatchSize)
	case c.RerankMaxTokens != 0 && (c.RerankMaxTokens < 16 || c.RerankMaxTokens > 8192):
		return fmt.Errorf("rerank-max-tokens: %d is outside 16..8192", c.RerankMaxTokens)
	case c.Mode != "offline" && c.Mode != "online":
		return fmt.Errorf("mode: %q is not offline or online", c.Mode)
	case c.ChatModel == "":
		return errors.New("chat-model: empty: name an Ollama chat model such as llama3.2:3b")
	case c.NumCtx < 512 || c.NumCtx > 1<<20:
		return fmt.Errorf("num-ctx: %d is outside 512..1048576", c.NumCtx)
	case c.Temperature < 0 || c.Temperature > 2:
		return fmt.Errorf("temperature: %g is outside 0..2", c.Temperature)
	case c.WebProvider != "tavily" && c.WebProvider != "searxng":
		return fmt.Errorf("web-provider: %q is not tavily or searxng", c.WebProvider)
	case c.MaxOpenIndexes < 1 || c.MaxOpenIndexes > 256:
		return fmt.Errorf("max-open-indexes: %d is outside 1..256", c.MaxOpenIndexes)
	case c.ServeMaxConcurrent < 1 || c.ServeMaxConcurrent > 1024:
		return fmt.Errorf("serve-max-concurrent: %d is outside 1..1024", c.ServeMaxConcurrent)
	case c.ServeQueue < 0 || c.ServeQueue > 65536:
		return fmt.Errorf("serve-queue: %d is outside 0..65536", c.ServeQueue)
	case c.MCPMaxSessions < 1 || c.MCPMaxSessions > 10000:
		return fmt.Errorf("mcp-max-sessions: %d is outside 1..10000: set how many MCP clients lore mcp --http serves at once (default 64)", c.MCPMaxSessions)
	}
	if _, err := time.ParseDuration(c.KeepAlive); err != nil {
		return fmt.Errorf("keep-alive: %q is not a duration like 5m", c.KeepAlive)
	}
	for _, d := range []struct{ key, v string }{{"embed-timeout", c.EmbedTimeout}, {"first-token-timeout", c.FirstTokenTimeout},
		{"serve-shutdown-timeout", c.ServeShutdownTimeout}} {
		if t, err := time.ParseDuration(d.v); err != nil || t <= 0 {
			return fmt.Errorf("%s: %q is not a positive duration like 2m", d.key, d.v)
		}
	}
	if _, err := ParseOllamaHost(c.OllamaHost); err != nil {
		return fmt.Errorf("ollama-host: %w", err)
	}
	if _, _, err := net.SplitHostPort(c.ServeAddr); err != nil {
		return fmt.Errorf("serve-addr: %q is not host:port, e.g. 127.0.0.1:8765", c.ServeAddr)
	}
	if c.ServeMaxBody < 1<<10 {
		return fmt.Errorf("serve-max-body: %d is below 1KiB", c.ServeMaxBody)
	}
	return c.validateStore()
}

var collectionPrefix = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,31}$`)

// validateStore checks the store keys; the Weaviate ones only matter
// (and are only required) with store: weaviate.
func (c Config) validateStore() error {
	switch c.Store {
	case "local":
		return nil
	case "weaviate":
	default:
		return fmt.Errorf("store: %q is not local or weaviate", c.Store)
	}
	eps, err := c.WeaviateURLs()
	if err != nil {
		return err
	}
	if len(eps) == 0 {
		return errors.New("weaviate-endpoints: empty: with store: weaviate, name the cluster, e.g. http://127.0.0.1:8080")
	}
	if g := c.WeaviateGRPC(); len(g) > 0 && len(g) != len(eps) {
		return fmt.Errorf("weaviate-grpc-endpoints: %d given for %d weaviate-endpoints: give one host:port for each, or none", len(g), len(eps))
	}
	for _, g := range c.WeaviateGRPC() {
		if _, _, err := net.SplitHostPort(g); err != nil {
			return fmt.Errorf("weaviate-grpc-endpoints: %q is not host:port, e.g. 127.0.0.1:50051", g)
		}
	}
	if !collectionPrefix.MatchString(c.WeaviateCollectionPrefix) {
		return fmt.Errorf("weaviate-collection-prefix: %q must start with a capital letter and hold only letters and digits (at most 32), e.g. Lore", c.WeaviateCollectionPrefix)
	}
	if c.WeaviateReplication < 0 || c.WeaviateReplication > 15 {
		return fmt.Errorf("weaviate-replication: %d is outside 0..15 (0: min(3, nodes))", c.WeaviateReplication)
	}
	if _, _, err := c.WeaviateLevels(); err != nil {
		return err
	}
	return nil
}

// WeaviateURLs are weaviate-endpoints, checked.
func (c Config) WeaviateURLs() ([]string, error) {
	var out []string
	for e := range strings.SplitSeq(c.WeaviateEndpoints, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		u, err := url.Parse(e)
		if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("weaviate-endpoints: %q is not http://host:port (https is not supported yet: reach the cluster over a private network or a tunnel)", RedactURL(e))
		}
		out = append(out, u.Scheme+"://"+u.Host)
	}
	return out, nil
}

// WeaviateGRPC is weaviate-grpc-endpoints as a list.
func (c Config) WeaviateGRPC() []string {
	var out []string
	for e := range strings.SplitSeq(c.WeaviateGRPCEndpoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// WeaviateLevels are the write and read consistency levels of
// weaviate-consistency; one level sets both.
func (c Config) WeaviateLevels() (write, read string, err error) {
	parts := strings.Split(strings.ToUpper(strings.ReplaceAll(c.WeaviateConsistency, " ", "")), ",")
	if len(parts) == 1 {
		parts = append(parts, parts[0])
	}
	for _, p := range parts {
		if len(parts) != 2 || (p != "ONE" && p != "QUORUM" && p != "ALL") {
			return "", "", fmt.Errorf("weaviate-consistency: %q is not WRITE,READ with each ONE, QUORUM or ALL, e.g. QUORUM,ONE", c.WeaviateConsistency)
		}
	}
	return parts[0], parts[1], nil
}

// CORSOrigins are the origins of serve-cors-origins.
func (c Config) CORSOrigins() []string {
	var out []string
	for o := range strings.SplitSeq(c.ServeCORSOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, strings.TrimRight(o, "/"))
		}
	}
	return out
}

// ShutdownTimeout is serve-shutdown-timeout (30s for a value Validate
// would refuse).
func (c Config) ShutdownTimeout() time.Duration {
	if d, err := time.ParseDuration(c.ServeShutdownTimeout); err == nil && d > 0 {
		return d
	}
	return 30 * time.Second
}

// OllamaTimeouts are the configurable deadlines of calls to Ollama (zero
// for a value Validate would refuse: the default).
func (c Config) OllamaTimeouts() (embed, firstToken time.Duration) {
	embed, _ = time.ParseDuration(c.EmbedTimeout)
	firstToken, _ = time.ParseDuration(c.FirstTokenTimeout)
	return max(embed, 0), max(firstToken, 0)
}

// RedactURL hides the password of a URL or host setting (user:pw@host,
// with or without a scheme) for showing it; a value it cannot read that
// holds an @ is hidden whole.
func RedactURL(v string) string {
	if !strings.Contains(v, "@") {
		return v
	}
	prefix := ""
	if !strings.Contains(v, "://") {
		prefix = "http://"
	}
	u, err := url.Parse(prefix + v)
	if err != nil {
		return "(hidden: it holds credentials)"
	}
	if u.User == nil {
		return v
	}
	return strings.TrimPrefix(u.Redacted(), prefix)
}

// ParseOllamaHost reads a host the way the ollama CLI reads OLLAMA_HOST:
// "host", "host:port" or a URL; the port defaults to 11434.
func ParseOllamaHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty: set it to the address Ollama listens on, e.g. http://127.0.0.1:11434")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	shown := RedactURL(s) // errors may be logged: never with a password
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q is not a host or URL", shown)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q: scheme must be http or https", shown)
	}
	if strings.HasSuffix(u.Host, ":") {
		return nil, fmt.Errorf("%q has an empty port", shown)
	}
	if u.Port() == "" {
		u.Host = joinHostPort(u.Hostname(), "11434")
	}
	return u, nil
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// ModelsDir is where reranker models are installed.
func (c Config) ModelsDir() string { return filepath.Join(c.DataDir, "models") }

// IndexesDir holds one folder per index, named as the index.
func (c Config) IndexesDir() string { return filepath.Join(c.DataDir, "indexes") }

// IndexDir is where the named index lives.
func (c Config) IndexDir() string { return filepath.Join(c.IndexesDir(), c.Index) }
