package ingest

import (
	"strings"
	"testing"
)

func headings(ps []Chunk) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Heading)
	}
	return out
}

func TestStructuredFilesAreCutByKey(t *testing.T) {
	opt := ChunkOptions{Size: 300, Overlap: 40}
	long := func(word string) string { return strings.Repeat(word+" ", 20) }
	tests := []struct {
		name, file, src string
		want            []string // headings; every piece must also start at a key's line
	}{{
		name: "YAML config sample: top-level keys, comments above a key go with it",
		file: "prometheus.yml",
		src:  "# my global config\nglobal:\n  scrape_interval: 15s # " + long("scrape") + "\n\n# Alertmanager configuration\nalerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['a:9093']\n\nrule_files:\n  - first.yml\n",
		want: []string{"global", "alerting; rule_files"},
	}, {
		name: "an OpenAPI file too big for one chunk is cut at the keys of its big key",
		file: "openapi.yaml",
		src: "openapi: 3.0.0\ninfo:\n  title: API\npaths:\n  /api/v1/query:\n    get:\n      description: " + long("query") +
			"\n  /api/v1/labels:\n    get:\n      description: " + long("labels") + "\n",
		want: []string{"openapi; info; paths > /api/v1/query", "paths > /api/v1/labels"},
	}, {
		name: "JSON: the keys of the root object, small ones together",
		file: "package.json",
		src:  "{\n  \"name\": \"docs\",\n  \"scripts\": {\n    \"build\": \"" + long("build") + "\"\n  },\n  \"dependencies\": {\n    \"react\": \"^18\"\n  }\n}\n",
		want: []string{"name; scripts; dependencies"},
	}, {
		name: "TOML: top-level keys and tables, not the keys inside a table",
		file: "config.toml",
		src:  "title = \"site\"\n\n[server]\nport = 8080\nnote = \"" + long("server") + "\"\n\n[[plugins]]\nname = \"x\"\n",
		want: []string{"title; server; plugins"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := chunkString(t, tt.file, tt.src, opt)
			if got := headings(ps); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("headings %q, want %q\n%s", got, tt.want, dump(ps))
			}
			lines := splitLines(tt.src)
			covered := 0
			for i, p := range ps {
				covered += p.End - p.Start + 1
				if i > 0 && p.Start <= ps[i-1].End {
					t.Errorf("piece %d starts at %d inside the previous one (ends %d)", i, p.Start, ps[i-1].End)
				}
			}
			if covered < len(lines)-4 {
				t.Errorf("pieces cover %d of %d lines", covered, len(lines))
			}
		})
	}
}

func TestStructuredFilesWithoutKeys(t *testing.T) {
	for _, src := range []string{"- a\n- b\n", "[1, 2, 3]\n", "---\n---\n", "", "\n\n", "{}", "a: [\n"} {
		ps := chunkString(t, "x.yaml", src, testChunk)
		if strings.TrimSpace(strings.Trim(src, "-\n")) != "" && len(ps) == 0 {
			t.Errorf("%q: no chunk", src)
		}
		chunkString(t, "x.json", src, testChunk)
		chunkString(t, "x.toml", src, testChunk)
	}
}

func FuzzStructured(f *testing.F) {
	f.Add("a:\n  b: 1\n# c\nd: [1,\n 2]\n", "x.yaml")
	f.Add("{\n  \"a\": {\n    \"b\": 1\n  }\n}", "x.json")
	f.Add("[t]\nk = 1\n[[u]]\n", "x.toml")
	f.Fuzz(func(t *testing.T, src, name string) {
		for _, n := range []string{"x.yaml", "x.json", "x.toml"} {
			chunkString(t, n, src, ChunkOptions{Size: 200, Overlap: 20})
		}
	})
}
