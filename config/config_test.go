package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lore.yaml")
	os.WriteFile(file, []byte("embed-model: from-file\nchunk-size: 900\nindex: filed\nollama-host: filehost:1\n"), 0o644)

	tests := []struct {
		name  string
		env   map[string]string
		flags Flags
		check func(c Config) string
	}{
		{"file over defaults", nil, nil, func(c Config) string {
			if c.EmbedModel != "from-file" || c.ChunkSize != 900 || c.EmbedBatchSize != 32 {
				return "file not applied over defaults"
			}
			return ""
		}},
		{"env over file", map[string]string{"LORE_EMBED_MODEL": "from-env", "LORE_MAX_FILE_SIZE": "2MiB"}, nil, func(c Config) string {
			if c.EmbedModel != "from-env" || c.MaxFileSize != 2<<20 || c.ChunkSize != 900 {
				return "env not applied over file"
			}
			return ""
		}},
		{"flags over env", map[string]string{"LORE_EMBED_MODEL": "from-env"}, Flags{"embed-model": "from-flag"}, func(c Config) string {
			if c.EmbedModel != "from-flag" {
				return "flag not applied over env"
			}
			return ""
		}},
		{"OLLAMA_HOST is below the file", map[string]string{"OLLAMA_HOST": "envhost:2"}, nil, func(c Config) string {
			if c.OllamaHost != "filehost:1" {
				return "file should win over OLLAMA_HOST"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"HOME": dir}
			for k, v := range tt.env {
				env[k] = v
			}
			c, err := Load(file, envOf(env), tt.flags)
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(c); msg != "" {
				t.Fatalf("%s: %+v", msg, c)
			}
		})
	}
}

// TestWatchSetting: the chat, serve and mcp keep their indexes fresh
// unless the user said not to, in the file, the environment or a flag.
func TestWatchSetting(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "off.yaml")
	os.WriteFile(file, []byte("watch: false\n"), 0o644)
	for _, tt := range []struct {
		name  string
		file  string
		env   map[string]string
		flags Flags
		want  bool
	}{
		{"default", "", nil, nil, true},
		{"file", file, nil, nil, false},
		{"env", "", map[string]string{"LORE_WATCH": "false"}, nil, false},
		{"env over file", file, map[string]string{"LORE_WATCH": "true"}, nil, true},
		{"flag over env", "", map[string]string{"LORE_WATCH": "true"}, Flags{"watch": "false"}, false},
	} {
		env := map[string]string{"HOME": dir}
		for k, v := range tt.env {
			env[k] = v
		}
		c, err := Load(tt.file, envOf(env), tt.flags)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if c.Watch != tt.want {
			t.Errorf("%s: watch %v, want %v", tt.name, c.Watch, tt.want)
		}
	}
}

func TestDefaultsAndXDG(t *testing.T) {
	dir := t.TempDir()
	c, err := Load("", envOf(map[string]string{"HOME": dir, "OLLAMA_HOST": "10.0.0.5"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Index != "default" || c.OllamaHost != "10.0.0.5" || c.DataDir != filepath.Join(dir, ".local/share/lore") {
		t.Fatalf("%+v", c)
	}
	c, err = Load("", envOf(map[string]string{"HOME": dir, "XDG_DATA_HOME": "/x", "XDG_STATE_HOME": "/s"}), Flags{"index": "work"})
	if err != nil {
		t.Fatal(err)
	}
	if c.IndexDir() != "/x/lore/indexes/work" || c.StateDir != "/s/lore" {
		t.Fatalf("%+v", c)
	}
	// The default file is read when present.
	os.MkdirAll(filepath.Join(dir, "cfg", "lore"), 0o755)
	os.WriteFile(filepath.Join(dir, "cfg", "lore", "config.yaml"), []byte("embedder: none\n"), 0o644)
	c, err = Load("", envOf(map[string]string{"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "cfg")}), nil)
	if err != nil || c.Embedder != "none" {
		t.Fatalf("default config file not read: %v %+v", err, c)
	}
}

func TestRelativeXDGIsIgnored(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_DATA_HOME": "data", "XDG_STATE_HOME": "./state", "XDG_CONFIG_HOME": "cfg"}
	c, err := Load("", envOf(env), nil)
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		c.DataDir:            filepath.Join(home, ".local/share") + "/",
		c.StateDir:           filepath.Join(home, ".local/state") + "/",
		File("", envOf(env)): filepath.Join(home, ".config") + "/",
	} {
		if !strings.HasPrefix(dir, want) {
			t.Errorf("%s: want it under %s (a relative XDG directory is ignored)", dir, want)
		}
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	n := 0
	write := func(s string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("c%d.yaml", n))
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	tests := []struct {
		name  string
		file  string
		env   map[string]string
		flags Flags
		want  string
	}{
		{"unknown key", write("chunk_size: 3\n"), nil, nil, `unknown key "chunk_size"`},
		{"bad yaml", write("a: [\n"), nil, nil, "not valid YAML"},
		{"bad number in file", write("chunk-size: lots\n"), nil, nil, "chunk-size"},
		{"a list for a value", write("chat-model: [llama3, qwen]\n"), nil, nil, "chat-model: expected one value"},
		{"a map for a value", write("tavily-api-key:\n  a: b\n"), nil, nil, "tavily-api-key: expected one value"},
		{"bad env", "", map[string]string{"LORE_CHUNK_SIZE": "x"}, nil, "LORE_CHUNK_SIZE"},
		{"bad flag", "", nil, Flags{"embed-batch-size": "x"}, "--embed-batch-size"},
		{"embedder", "", map[string]string{"LORE_EMBEDDER": "openai"}, nil, "embedder:"},
		{"chunk size", "", nil, Flags{"chunk-size": "10"}, "chunk-size:"},
		{"overlap", "", nil, Flags{"chunk-overlap": "1400"}, "chunk-overlap:"},
		{"index name", "", nil, Flags{"index": "../etc"}, "index:"},
		{"host", "", map[string]string{"LORE_OLLAMA_HOST": "ftp://x"}, nil, "ollama-host:"},
		{"NaN in file", write("temperature: .nan\n"), nil, nil, "temperature:"},
		{"NaN env", "", map[string]string{"LORE_RRF_K": "NaN"}, nil, "rrf-k:"},
		{"Inf flag", "", nil, Flags{"rrf-k": "+Inf"}, "rrf-k:"},
		{"Inf threshold", "", map[string]string{"LORE_WEB_FALLBACK_THRESHOLD": "-Inf"}, nil, "web-fallback-threshold:"},
		{"NaN temperature flag", "", nil, Flags{"temperature": "nan"}, "temperature:"},
		{"embed timeout", "", map[string]string{"LORE_EMBED_TIMEOUT": "soon"}, nil, "embed-timeout:"},
		{"first token timeout", write("first-token-timeout: 0s\n"), nil, nil, "first-token-timeout:"},
		{"max open indexes", write("max-open-indexes: 0\n"), nil, nil, "max-open-indexes:"},
		{"serve max concurrent", "", map[string]string{"LORE_SERVE_MAX_CONCURRENT": "0"}, nil, "serve-max-concurrent:"},
		{"serve queue", "", nil, Flags{"serve-queue": "-1"}, "serve-queue:"},
		{"watch env", "", map[string]string{"LORE_WATCH": "sometimes"}, nil, "LORE_WATCH: \"sometimes\" is not true or false"},
		{"watch in file", write("watch: maybe\n"), nil, nil, "watch: \"maybe\" is not true or false"},
		{"missing explicit file", filepath.Join(dir, "nope.yaml"), nil, nil, "nope.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"HOME": dir}
			for k, v := range tt.env {
				env[k] = v
			}
			_, err := Load(tt.file, envOf(env), tt.flags)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

func TestParseOllamaHost(t *testing.T) {
	for in, want := range map[string]string{
		"localhost":             "http://localhost:11434",
		"127.0.0.1:8080":        "http://127.0.0.1:8080",
		"https://ollama.lan":    "https://ollama.lan:11434",
		"http://[::1]:11434":    "http://[::1]:11434",
		"http://10.0.0.2:11434": "http://10.0.0.2:11434",
	} {
		u, err := ParseOllamaHost(in)
		if err != nil || u.String() != want {
			t.Errorf("%q: got %v %v, want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://x", "http://host:"} {
		if _, err := ParseOllamaHost(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSampleConfigIsValid(t *testing.T) {
	// The documented config.yaml at the root must load as it is.
	if _, err := Load("../config.yaml", envOf(map[string]string{"HOME": t.TempDir()}), nil); err != nil {
		t.Fatal(err)
	}
}

// FuzzConfigFile: whatever a config file holds, Load returns a config
// that passes Validate or an error; it never panics, and never accepts a
// value it did not check.
func FuzzConfigFile(f *testing.F) {
	sample, err := os.ReadFile("../config.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{string(sample), "top-k: 7\n", "chunk-size: 1e3\n", "index: \"a b\"\n", "ollama-host: \"[::1]:99999\"\n",
		"max-file-size: 9999999999999TiB\n", "chat-model: [a]\n", "temperature: .nan\n", "num-ctx: -1\n", "&a [*a]\n", "? [a]\n: b\n"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(p, envOf(map[string]string{"HOME": dir}), nil)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Load accepted a config that does not validate: %v\n%q", err, data)
		}
	})
}

func TestLoadDetailedOrigins(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lore.yaml")
	os.WriteFile(file, []byte("embed-model: from-file\nchunk-size: 900\nindex: filed\n"), 0o644)
	env := envOf(map[string]string{"HOME": dir, "OLLAMA_HOST": "envhost:2", "LORE_CHUNK_SIZE": "1000", "TAVILY_API_KEY": "tvly-secret"})
	l, err := LoadDetailed(file, env, Flags{"index": "flagged"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Source{
		"embed-model":    {Origin: FromFile},
		"chunk-size":     {FromEnv, "LORE_CHUNK_SIZE"},
		"index":          {FromFlag, "--index"},
		"ollama-host":    {FromEnv, "OLLAMA_HOST"},
		"tavily-api-key": {FromEnv, "TAVILY_API_KEY"},
		"top-k":          {Origin: FromDefault},
	}
	for k, w := range want {
		if got := l.Origins[k]; got != w {
			t.Errorf("%s: origin %+v, want %+v", k, got, w)
		}
	}
	if len(l.Origins) != len(Keys()) || !l.FileFound || l.File != file || l.Config.Index != "flagged" {
		t.Errorf("loaded %+v", l)
	}
	if !Secret("tavily-api-key") || Secret("chat-model") {
		t.Error("only tavily-api-key is a secret")
	}
}

// A broken file is left out whole and the other layers still apply: lore
// doctor goes on with the rest of the configuration.
func TestLoadDetailedBrokenFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lore.yaml")
	os.WriteFile(file, []byte("chunk-size: 900\nchat-model: [a, b\n"), 0o644)
	l, err := LoadDetailed(file, envOf(map[string]string{"HOME": dir, "LORE_TOP_K": "7", "LORE_NUM_CTX": "lots"}), nil)
	if err == nil || !strings.Contains(err.Error(), "not valid YAML") || !strings.Contains(err.Error(), "line ") {
		t.Fatalf("error %v", err)
	}
	if len(l.Problems) != 2 || l.FileErr != l.Problems[0] || !strings.Contains(l.Problems[1].Error(), "LORE_NUM_CTX") {
		t.Errorf("problems %v", l.Problems)
	}
	if l.Config.ChunkSize != 1500 || l.Config.TopK != 7 || l.Origins["chunk-size"].Origin != FromDefault || !l.FileFound {
		t.Errorf("config %+v, origins %v", l.Config, l.Origins)
	}
	if _, err := Load(file, envOf(map[string]string{"HOME": dir}), nil); err == nil || !strings.Contains(err.Error(), "not valid YAML") {
		t.Errorf("Load: %v", err)
	}
}
