package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetInFile(t *testing.T) {
	sample, err := os.ReadFile("../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		before     string // "" with missing: no file at all
		missing    bool
		key, value string
		want       string
	}{
		{
			name:   "documented sample: only the key's line changes",
			before: string(sample), key: "web-fallback-threshold", value: "0.35",
			want: strings.Replace(string(sample), "\nweb-fallback-threshold: 0.0\n", "\nweb-fallback-threshold: 0.35\n", 1),
		},
		{
			name:   "inline comment and its spacing are kept",
			before: "# top\nmode: online\nweb-fallback-threshold: 0.0   # tuned by hand\ntop-k: 5\n",
			key:    "web-fallback-threshold", value: "-1.25",
			want: "# top\nmode: online\nweb-fallback-threshold: -1.25   # tuned by hand\ntop-k: 5\n",
		},
		{
			name:   "absent key goes under its commented-out line",
			before: "mode: online\n# web-fallback-threshold: 0.0\n# (a logit)\ntop-k: 5\n",
			key:    "web-fallback-threshold", value: "0.5",
			want: "mode: online\n# web-fallback-threshold: 0.0\nweb-fallback-threshold: 0.5\n# (a logit)\ntop-k: 5\n",
		},
		{
			name:   "absent key is appended, even without a final newline",
			before: "# mine\nmode: online",
			key:    "web-fallback-threshold", value: "2",
			want: "# mine\nmode: online\nweb-fallback-threshold: 2\n",
		},
		{
			name:   "a key with no value gets one",
			before: "rerank-model:\ntop-k: 5\n",
			key:    "rerank-model", value: "cross-encoder/ms-marco-MiniLM-L-6-v2",
			want: "rerank-model: cross-encoder/ms-marco-MiniLM-L-6-v2\ntop-k: 5\n",
		},
		{
			name:   "a value YAML would misread is quoted",
			before: "rerank-model: \"\"\n",
			key:    "rerank-model", value: "odd: name #1",
			want: "rerank-model: \"odd: name #1\"\n",
		},
		{
			name:   "CRLF file stays CRLF",
			before: "mode: online\r\nweb-fallback-threshold: 0.0 # x\r\n",
			key:    "web-fallback-threshold", value: "1",
			want: "mode: online\r\nweb-fallback-threshold: 1 # x\r\n",
		},
		{
			name:    "missing file and folder are created",
			missing: true,
			key:     "web-fallback-threshold", value: "0.12",
			want: "web-fallback-threshold: 0.12\n",
		},
		{
			name:   "empty file",
			before: "",
			key:    "web-fallback-threshold", value: "0.12",
			want: "web-fallback-threshold: 0.12\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "lore", "config.yaml")
			if !tt.missing {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(tt.before), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			if err := SetInFile(path, tt.key, tt.value); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("file is\n%s\nwant\n%s", got, tt.want)
			}
			fi, _ := os.Stat(path)
			wantMode := os.FileMode(0o640)
			if tt.missing {
				wantMode = 0o600
			}
			if fi.Mode().Perm() != wantMode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), wantMode)
			}
			c, err := Load(path, envOf(map[string]string{"HOME": dir}), nil)
			if err != nil {
				t.Fatalf("the written file does not load: %v", err)
			}
			f, _ := fieldByKey(&c, tt.key)
			want := Defaults()
			want.Set(tt.key, tt.value)
			w, _ := fieldByKey(&want, tt.key)
			if !f.Equal(w) {
				t.Errorf("%s loads as %v, want %v", tt.key, f, w)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("folder holds %d files, want only the config (a temporary file left behind?)", len(entries))
			}
		})
	}
}

func TestSetInFileRefuses(t *testing.T) {
	const before = "# keep me\ntop-k: 5\nweb-fallback-threshold: 0.0 # note\n"
	tests := []struct {
		name, before, key, value string
		wantErr                  []string // all must appear in the error
	}{
		{"bad number", before, "web-fallback-threshold", "high", []string{"web-fallback-threshold", `"high"`}},
		{"unknown key", before, "web-fallback", "1", []string{`"web-fallback"`, "unknown"}},
		{"not settable by file", before, "-", "x", []string{"unknown"}},
		{"out of range", before, "top-k", "1000", []string{"top-k", "1..100"}},
		{"out of range with the file's other values", "chunk-size: 400\n", "chunk-overlap", "300", []string{"chunk-overlap"}},
		{"broken file", "top-k: [1, 2]\n", "web-fallback-threshold", "1", []string{"top-k", "fix it"}},
		{"value over several lines", "rerank-model: |\n  a\n  b\ntop-k: 5\n", "rerank-model", "c", []string{"rerank-model", "by hand"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			os.WriteFile(path, []byte(tt.before), 0o644)
			err := SetInFile(path, tt.key, tt.value)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got, _ := os.ReadFile(path); string(got) != tt.before {
				t.Errorf("file changed to\n%s", got)
			}
		})
	}
}

func TestSetInFileThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "lore.yaml")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte("mode: online\n"), 0o644)
	link := filepath.Join(dir, "config.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := SetInFile(link, "web-fallback-threshold", "0.5"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file: %v", err)
	}
	if got, _ := os.ReadFile(real); string(got) != "mode: online\nweb-fallback-threshold: 0.5\n" {
		t.Errorf("target is %q", got)
	}
}
