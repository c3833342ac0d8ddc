package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

var testChunk = ChunkOptions{Size: 400, Overlap: 80}

// chunkString loads src as a file named name and chunks it.
func chunkString(t testing.TB, name, src string, opt ChunkOptions) []Chunk {
	t.Helper()
	res, err := Load(context.Background(), name, []byte(src), opt)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	checkPieces(t, src, res.Chunks, opt)
	return res.Chunks
}

// checkPieces asserts what must hold for any input: line ranges inside the
// file and in order, nothing over budget, no empty chunk.
func checkPieces(t testing.TB, src string, ps []Chunk, opt ChunkOptions) {
	t.Helper()
	lines := max(1, len(splitLines(src)))
	for i, p := range ps {
		if p.Start < 1 || p.End < p.Start || p.End > lines {
			t.Fatalf("piece %d has lines %d-%d, file has %d", i, p.Start, p.End, lines)
		}
		if len(p.Text) > opt.Size {
			t.Fatalf("piece %d is %d bytes, budget %d: %q", i, len(p.Text), opt.Size, p.Text)
		}
		if strings.TrimSpace(p.Text) == "" {
			t.Fatalf("piece %d is empty", i)
		}
		if p.Kind != KindProse && p.Kind != KindCode && p.Kind != KindTable {
			t.Fatalf("piece %d has kind %q", i, p.Kind)
		}
	}
}

func TestMarkdownChunks(t *testing.T) {
	para := func(word string, n int) string { return strings.TrimSpace(strings.Repeat(word+" ", n)) }
	tests := []struct {
		name string
		file string
		src  string
		want []string // "start-end|heading|kind|text fragment", one per piece
	}{{
		name: "front matter is dropped and line numbers kept",
		file: "a.md",
		src:  "---\ntitle: Hello\ntags: [x]\n---\n# Intro\n\nBody text.\n",
		want: []string{"5-7|Hello > Intro|prose|Body text."},
	}, {
		name: "nested headings form a breadcrumb",
		file: "a.md",
		src:  "# Install\n\nIntro " + para("intro", 40) + "\n\n## Linux\n\n### Manual install\n\nRun make " + para("make", 40) + "\n\n## Windows\n\nUse the installer " + para("setup", 40) + "\n",
		want: []string{"1-3|Install|prose|Intro", "5-9|Install > Linux > Manual install|prose|## Linux\n\n### Manual install\n\nRun make", "11-13|Install > Windows|prose|installer"},
	}, {
		name: "small sections are joined, under the first one's trail and the others' names",
		file: "a.md",
		src:  "# Install\n\nIntro.\n\n## Linux\n\n### Manual install\n\nRun make.\n\n## Windows\n\nUse the installer.\n",
		want: []string{"1-13|Install; Manual install; Windows|prose|Intro.\n\n## Linux\n\n### Manual install\n\nRun make."},
	}, {
		name: "setext headings",
		file: "a.md",
		src:  "Title\n=====\n\nText one.\n\nSub\n---\n\nText two.\n",
		want: []string{"1-9|Title; Sub|prose|Text one.\n\nSub\n---\n\nText two."},
	}, {
		name: "CRLF files keep their line numbers",
		file: "a.md",
		src:  "# A\r\n\r\nfirst\r\n\r\n# B\r\n\r\nsecond\r\n",
		want: []string{"1-7|A; B|prose|first\n\n# B\n\nsecond"},
	}, {
		name: "no headings",
		file: "a.md",
		src:  "just some text\non two lines\n",
		want: []string{"1-2||prose|on two lines"},
	}, {
		name: "empty file",
		file: "a.md",
		src:  "",
		want: nil,
	}, {
		name: "tables are their own kind",
		file: "a.md",
		src:  "# Flags\n\n| flag | meaning |\n|---|---|\n| -v | verbose |\n",
		want: []string{"1-5|Flags|table|-v | verbose"},
	}, {
		name: "MDX imports and JSX tags are markup, not text",
		file: "a.mdx",
		src:  "import { Tabs } from './tabs'\n\n# Use\n\n<Tabs items={['a']}>\n<Tab>Run `lore <cmd>` now</Tab>\n</Tabs>\n{/* hidden */}\n",
		want: []string{"3-6|Use|prose|Run `lore <cmd>` now"},
	}, {
		name: "HTML comments are not text",
		file: "a.md",
		src:  "# A\n\n<!-- secret\nnote -->\nvisible\n",
		want: []string{"1-5|A|prose|visible"},
	}, {
		name: "a fence that fits is never split",
		file: "a.md",
		src:  "# Code\n\n" + para("alpha", 50) + "\n\n```go\n" + strings.Repeat("fmt.Println(1)\n", 20) + "```\n",
		want: []string{"1-3|Code|prose|alpha alpha", "5-26|Code|code|```go"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := chunkString(t, tt.file, tt.src, testChunk)
			if len(ps) != len(tt.want) {
				t.Fatalf("got %d pieces, want %d:\n%s", len(ps), len(tt.want), dump(ps))
			}
			for i, w := range tt.want {
				parts := strings.SplitN(w, "|", 4)
				got := fmt.Sprintf("%d-%d", ps[i].Start, ps[i].End)
				if got != parts[0] || ps[i].Heading != parts[1] || ps[i].Kind != parts[2] || !strings.Contains(ps[i].Text, parts[3]) {
					t.Errorf("piece %d = %s|%s|%s|%q, want %s", i, got, ps[i].Heading, ps[i].Kind, ps[i].Text, w)
				}
			}
			for _, p := range ps {
				for _, bad := range []string{"<Tab", "import {", "secret", "title: Hello", "hidden"} {
					if strings.Contains(p.Text, bad) {
						t.Errorf("markup %q leaked into %q", bad, p.Text)
					}
				}
			}
		})
	}
}

func TestLongSectionsSplitAtParagraphsWithOverlap(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Long\n\n")
	for i := range 12 {
		fmt.Fprintf(&b, "Paragraph %d starts here.\nIt has a second line %d.\n\n", i, i)
	}
	ps := chunkString(t, "long.md", b.String(), ChunkOptions{Size: 200, Overlap: 40})
	if len(ps) < 3 {
		t.Fatalf("want several pieces, got %d", len(ps))
	}
	for i, p := range ps {
		if p.Heading != "Long" {
			t.Errorf("piece %d heading %q", i, p.Heading)
		}
		if i > 0 {
			// The overlap repeats the end of the previous piece.
			prev := ps[i-1]
			lastLine := prev.Text[strings.LastIndexByte(prev.Text, '\n')+1:]
			if !strings.HasPrefix(p.Text, lastLine) || p.Start != prev.End {
				t.Errorf("piece %d (%d-%d) does not start with the last line %q of piece %d (%d-%d)", i, p.Start, p.End, lastLine, i-1, prev.Start, prev.End)
			}
		}
	}
}

func TestOversizedFenceSplitsAtLines(t *testing.T) {
	src := "# Big\n\n```\n" + strings.Repeat("line of code that is long enough\n", 40) + "```\n"
	ps := chunkString(t, "big.md", src, ChunkOptions{Size: 300, Overlap: 50})
	if len(ps) < 4 {
		t.Fatalf("want the fence split, got %d pieces", len(ps))
	}
	next := 1 // the first piece starts with the heading line
	for _, p := range ps {
		if p.Kind != KindCode {
			t.Errorf("kind %q, want code", p.Kind)
		}
		if p.Start != next {
			t.Errorf("piece starts at %d, want %d (no overlap inside code)", p.Start, next)
		}
		next = p.End + 1
	}
}

func TestGiantParagraph(t *testing.T) {
	src := strings.Repeat("word ", 3000) // one 15 KB line
	ps := chunkString(t, "giant.txt", src, testChunk)
	if len(ps) < 30 {
		t.Fatalf("got %d pieces", len(ps))
	}
	total := 0
	for _, p := range ps {
		total += strings.Count(p.Text, "word")
	}
	if total != 3000 {
		t.Errorf("pieces hold %d words, want all 3000", total)
	}
}

func TestRST(t *testing.T) {
	long := strings.Repeat("word ", 50)
	src := "Guide\n=====\n\nIntro " + long + "\n\nSetup\n-----\n\nDo this.\n"
	ps := chunkString(t, "a.rst", src, testChunk)
	if len(ps) != 2 || ps[1].Heading != "Guide > Setup" || ps[1].Start != 6 {
		t.Fatalf("got\n%s", dump(ps))
	}
}

func TestHTML(t *testing.T) {
	src := `<!doctype html>
<html><head><title>T</title><style>p { color: red }</style></head>
<body>
<h1>Guide</h1>
<p>First paragraph
about things. ` + strings.Repeat("More words. ", 20) + `</p>
<script>var hidden = 1;</script>
<h2>Details &amp; more</h2>
<pre>code  keeps   spacing</pre>
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>b</td></tr></table>
</body></html>
`
	ps := chunkString(t, "a.html", src, testChunk)
	all := dump(ps)
	for _, bad := range []string{"color: red", "hidden", "<p>"} {
		if strings.Contains(all, bad) {
			t.Errorf("%q leaked:\n%s", bad, all)
		}
	}
	if len(ps) != 2 || ps[0].Heading != "T > Guide" || ps[1].Heading != "T > Guide > Details & more" {
		t.Fatalf("got\n%s", all)
	}
	if ps[0].Start != 4 || ps[0].End != 6 {
		t.Errorf("first section lines %d-%d, want 4-6", ps[0].Start, ps[0].End)
	}
	if !strings.Contains(ps[1].Text, "code  keeps   spacing") || !strings.Contains(ps[1].Text, "a | b") {
		t.Errorf("pre or table lost: %q", ps[1].Text)
	}
}

func TestCodeDeclarations(t *testing.T) {
	tests := []struct {
		name, file, src string
		want            []string // "start-end title" per declaration block
	}{{
		name: "go: doc comments attach, doc headings split",
		file: "demo.go",
		src:  "// Package demo shows things.\n//\n// # Usage\n//\n// Call Run.\npackage demo\n\nimport \"fmt\"\n\n// Run runs.\n// It prints.\nfunc Run() {\n\tfmt.Println(\"run\")\n}\n\n// Stop stops.\nfunc Stop() {}\n",
		want: []string{"1-2 package demo", "3-6 package demo > Usage", "8-8 import \"fmt\"", "10-14 func Run()", "16-17 func Stop()"},
	}, {
		name: "python: decorators and classes",
		file: "a.py",
		src:  "import os\n\n\n@decorator\ndef a():\n    return 1\n\nclass B:\n    def m(self):\n        pass\n",
		want: []string{"1-1 import os", "4-6 def a()", "8-10 class B"},
	}, {
		name: "yaml: top-level keys",
		file: "ci.yaml",
		src:  "name: x\non:\n  push:\n    branches: [main]\njobs:\n  build:\n    runs-on: ubuntu\n",
		want: []string{"1-4 name: x", "5-7 jobs"},
	}, {
		name: "c: preprocessor and functions",
		file: "a.c",
		src:  "#include <stdio.h>\n\n/* add adds. */\nint add(int a, int b) {\n  return a + b;\n}\n",
		want: []string{"1-1 #include <stdio.h>", "3-6 int add(int a, int b)"},
	}, {
		// A licence header stands apart from the package clause; it is
		// titled by the declaration it precedes, not left untitled. A line
		// opening with a closer ("}{" in a test table) never starts a
		// declaration.
		name: "go: licence header and test tables",
		file: "t_test.go",
		src:  "// Copyright 2024 The Go Authors.\n// Use of this source code is governed by a BSD-style\n\npackage p\n\nvar tests = []struct{ in string }{{\n\t\"a\",\n}, {\n\t\"b\",\n},\n}{\n\t\"c\",\n}}\n\n// Trailing notes.\n",
		want: []string{"1-2 package p", "4-4 package p", "6-15 var tests = []struct{ in string }"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, b := range loadCode(tt.src) {
				got = append(got, fmt.Sprintf("%d-%d %s", b.Start, b.End(), b.Title))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			chunkString(t, tt.file, tt.src, testChunk)
		})
	}
}

func TestCodeChunksPackSmallDeclarations(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "// F%d does %d.\nfunc F%d() int {\n\treturn %d\n}\n\n", i, i, i, i)
	}
	ps := chunkString(t, "f.go", b.String(), testChunk)
	if len(ps) < 3 || len(ps) > 10 {
		t.Fatalf("30 small functions in %d pieces, want them packed into a handful:\n%s", len(ps), dump(ps))
	}
	if !strings.HasPrefix(ps[0].Heading, "func F0() int; func F1() int") {
		t.Errorf("heading %q should list the declarations", ps[0].Heading)
	}
}

func dump(ps []Chunk) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%d-%d [%s] %q: %q\n", p.Start, p.End, p.Kind, p.Heading, p.Text)
	}
	return b.String()
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"# a\n\ntext", "---\nx: 1\n---\n", "```\ncode\n", "| a |\n|---|\n", "<A>\n</A>", "a\n===\n", "\r\n\r\n# \r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range []string{"a.md", "a.mdx"} {
			chunkString(t, name, s, ChunkOptions{Size: 120, Overlap: 30})
		}
	})
}

func FuzzHTML(f *testing.F) {
	for _, s := range []string{"<h1>a</h1><p>b</p>", "<pre>\n\n x</pre>", "<table><tr><td>a", "<script>", "<h2>\n\n</h2>text"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		chunkString(t, "a.html", s, ChunkOptions{Size: 120, Overlap: 30})
	})
}

func FuzzCodeAndText(f *testing.F) {
	for _, s := range []string{"func a() {\n}\n\n// c\nfunc b() {}", "x\n===\n", "def a():\n  pass\n", "\t\n}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range []string{"a.go", "a.txt", "a.rst"} {
			chunkString(t, name, s, ChunkOptions{Size: 120, Overlap: 30})
		}
	})
}

func TestSmallSectionsAreJoinedUpToTheBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Options\n\n")
	for i := range 30 {
		fmt.Fprintf(&b, "## Option %d\n\nOption %d sets the number %d of things to do.\n\n", i, i, i)
	}
	src := b.String()
	big := chunkString(t, "a.md", src, ChunkOptions{Size: 1500, Overlap: 200})
	small := chunkString(t, "a.md", src, ChunkOptions{Size: 400, Overlap: 80})
	if len(big) >= len(small) {
		t.Fatalf("chunk-size 1500 gave %d chunks, 400 gave %d: the size setting changed nothing", len(big), len(small))
	}
	for _, ps := range [][]Chunk{big, small} {
		next := 1
		for i, p := range ps {
			if p.Start != next && p.Start != next+1 {
				t.Errorf("piece %d starts at line %d, the previous ended at %d: lines lost", i, p.Start, next-1)
			}
			next = p.End + 1
		}
	}
	for i, p := range big[:len(big)-1] {
		if len(p.Text) < 1500/2 {
			t.Errorf("piece %d of %d is %d bytes, under half the budget", i, len(big), len(p.Text))
		}
	}
	if !strings.HasPrefix(big[1].Heading, "Options > Option ") || !strings.Contains(big[1].Heading, "; Option ") {
		t.Errorf("a joined chunk is headed %q, want its first trail then the names joined to it", big[1].Heading)
	}
}

func TestJoiningStopsAtAHigherHeading(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 30)
	src := "## A\n\n" + long + "\n\n### x\n\nsmall x.\n\n## B\n\nsmall b.\n"
	ps := chunkString(t, "a.md", src, testChunk)
	if len(ps) != 3 || ps[1].Heading != "A > x" || ps[2].Heading != "B" {
		t.Fatalf("B, which is not about A, was joined to A > x:\n%s", dump(ps))
	}
}

func TestPageTitleHeadsEveryTrail(t *testing.T) {
	long := strings.Repeat("word ", 60)
	tests := []struct {
		name, file, src string
		want            []string // every piece's heading
	}{{
		name: "YAML front matter title, no top heading",
		file: "flags.md",
		src:  "---\ntitle: Feature flags\nsort_rank: 12\n---\n\nIntro " + long + "\n\n## Exemplars\n\n" + long + "\n",
		want: []string{"Feature flags", "Feature flags > Exemplars"},
	}, {
		name: "TOML front matter, quoted",
		file: "a.md",
		src:  "+++\ntitle = \"Storage: local\"\n+++\n\n## Retention\n\n" + long + "\n",
		want: []string{"Storage: local > Retention"},
	}, {
		name: "a lone H1 is the title, also of the text before it",
		file: "a.md",
		src:  "Intro " + long + "\n\n# Guide\n\n## Setup\n\n" + long + "\n",
		want: []string{"Guide", "Guide > Setup"},
	}, {
		name: "two H1s: neither is the page's title",
		file: "a.md",
		src:  "# One\n\n" + long + "\n\n# Two\n\n" + long + "\n",
		want: []string{"One", "Two"},
	}, {
		name: "the title is not repeated when the H1 says it",
		file: "a.md",
		src:  "---\ntitle: Guide\n---\n# Guide\n\n" + long + "\n",
		want: []string{"Guide"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := chunkString(t, tt.file, tt.src, testChunk)
			var got []string
			for _, p := range ps {
				got = append(got, p.Heading)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("headings %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTableChunksRepeatTheHeader(t *testing.T) {
	row := func(i int) string {
		return fmt.Sprintf("| `opt_%d` | duration | %s |", i, strings.Repeat(fmt.Sprintf("what option %d does ", i), 12))
	}
	var md strings.Builder
	md.WriteString("# Reference\n\n| Name | Type | Description |\n|---|---|---|\n")
	var html strings.Builder
	html.WriteString("<h1>Reference</h1>\n<table>\n<tr><th>Name</th><th>Type</th><th>Description</th></tr>\n")
	for i := range 12 {
		md.WriteString(row(i) + "\n")
		r := strings.Split(strings.Trim(row(i), "| "), " | ")
		fmt.Fprintf(&html, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>\n", r[0], r[1], r[2])
	}
	html.WriteString("</table>\n")
	for _, tc := range []struct{ file, src, head string }{
		{"a.md", md.String(), "| Name | Type | Description |\n|---|---|---|\n"},
		{"a.html", html.String(), "Name | Type | Description\n"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ps := chunkString(t, tc.file, tc.src, ChunkOptions{Size: 1500, Overlap: 200})
			if len(ps) < 3 {
				t.Fatalf("want the table in several chunks, got:\n%s", dump(ps))
			}
			seen := 0
			for i, p := range ps {
				body := strings.TrimPrefix(strings.TrimPrefix(p.Text, "# "), "Reference\n\n")
				if !strings.HasPrefix(body, tc.head) {
					t.Errorf("chunk %d of the table does not carry the column names: %q", i, p.Text)
				}
				if p.Kind != KindTable || p.Heading != "Reference" {
					t.Errorf("chunk %d is %s under %q", i, p.Kind, p.Heading)
				}
				if n := strings.Count(p.Text, "what option"); n < 12*2 && i < len(ps)-1 {
					t.Errorf("chunk %d holds %d rows' words: rows are not grouped up to the budget", i, n/12)
				}
				seen += strings.Count(p.Text, "`opt_")
				if strings.Contains(tc.file, ".md") && i > 0 && p.Start != ps[i-1].End+1 {
					t.Errorf("chunk %d starts at line %d, the previous ended at %d: its range is not its rows'", i, p.Start, ps[i-1].End)
				}
			}
			if strings.Contains(tc.file, ".md") && seen != 12 {
				t.Errorf("%d rows in all, want each of the 12 once", seen)
			}
		})
	}
}
