package ingest

import (
	"context"
	"strings"
	"testing"
)

// Headings of Go code chunks: lines of a raw string are text, not
// declarations; a package name is not repeated (issue 34).
func TestGoCodeHeadings(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		bad       []string // in no heading
		want      string   // in some heading
	}{
		{"raw string", "package multipart\n\nimport \"testing\"\n\nfunc TestParse(t *testing.T) {\n\tin := `--boundary\nContent-Type: text/plain\n\nbody\n--boundary--\n`\n\t_ = in\n}\n",
			[]string{"--boundary", "Content-Type", "body"}, "func TestParse(t *testing.T)"},
		{"rune backquote", "package p\n\nvar q = '`'\n\nfunc A() {}\n\nfunc B() {}\n", nil, "func B()"},
		{"package named once", "// Copyright 2026 The Authors.\n// Licensed under the MIT licence.\n\n// Package pathcache caches paths.\npackage pathcache\n\nfunc A() {}\n", []string{"pathcache; package pathcache"}, "package pathcache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Load(context.Background(), "x.go", []byte(tc.src), ChunkOptions{Size: 1500, Overlap: 200})
			if err != nil {
				t.Fatal(err)
			}
			var heads []string
			for _, c := range doc.Chunks {
				heads = append(heads, c.Heading)
			}
			all := strings.Join(heads, " | ")
			for _, b := range tc.bad {
				if strings.Contains(all, b) {
					t.Errorf("heading with %q: %s", b, all)
				}
			}
			if !strings.Contains(all, tc.want) {
				t.Errorf("no heading with %q: %s", tc.want, all)
			}
		})
	}
}
