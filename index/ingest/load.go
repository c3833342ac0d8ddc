// Package ingest turns a source folder into chunks: the walk (ignore
// rules, symbolic links, unreadable files recorded as skipped), bounded
// reads, a loader per format (Markdown, MDX, text, reStructuredText, HTML,
// code, PDF through pdftotext, YAML/TOML/JSON) and the chunker that cuts
// their blocks into Chunks with line ranges and heading breadcrumbs. It
// imports nothing of lore.
package ingest

import (
	"bytes"
	"context"
	"errors"
	"path"
	"strings"
	"unicode/utf8"
)

// fileType is how a file is loaded.
type fileType uint8

const (
	typeNone fileType = iota
	typeMarkdown
	typeMDX
	typeText
	typeRST
	typeHTML
	typeCode
	typePDF
	typeStructured // YAML, TOML, JSON
)

// Kinds of file, as lore index status counts them by the chunker they went
// through.
var fileKinds = map[fileType]string{typeMarkdown: "markdown", typeMDX: "markdown", typeText: "text", typeRST: "text",
	typeHTML: "html", typeCode: "code", typePDF: "pdf", typeStructured: "structured"}

// Structured reports whether a file of this name is YAML, TOML or JSON:
// keys and values, which keyword ranking weighs apart from prose.
func Structured(name string) bool { return typeOf(name) == typeStructured }

// FileKind is the kind of chunking a file of this name goes through:
// markdown, text, html, code, pdf or structured; "" when lore does not index it.
func FileKind(name string) string { return fileKinds[typeOf(name)] }

var typesByExt = map[string]fileType{
	".md": typeMarkdown, ".markdown": typeMarkdown, ".mdown": typeMarkdown, ".mdx": typeMDX,
	".txt": typeText, ".text": typeText, ".rst": typeRST,
	".html": typeHTML, ".htm": typeHTML, ".xhtml": typeHTML,
	".pdf":  typePDF,
	".yaml": typeStructured, ".yml": typeStructured, ".toml": typeStructured, ".json": typeStructured,
}

var codeExts = strings.Fields(`.go .py .pyi .js .mjs .cjs .jsx .ts .tsx .mts .rs .java .kt .kts .scala .c .h .cc .cpp .cxx
	.hpp .hh .cs .rb .php .swift .m .lua .pl .r .jl .ex .exs .erl .hs .ml .zig .nim .dart .sql .proto .graphql
	.sh .bash .zsh .fish .ps1 .ini .cfg .conf .tf .hcl .cmake .mk .gradle .vue .svelte`)

var codeNames = map[string]bool{"Makefile": true, "GNUmakefile": true, "Dockerfile": true, "Containerfile": true,
	"Justfile": true, "Rakefile": true, "Gemfile": true, "CMakeLists.txt": true, "go.mod": true}

// lockFiles are JSON written by package managers: thousands of lines of
// versions and hashes that no question is about.
var lockFiles = map[string]bool{"package-lock.json": true, "npm-shrinkwrap.json": true, "composer.lock": true}

func init() {
	for _, e := range codeExts {
		typesByExt[e] = typeCode
	}
}

func typeOf(name string) fileType {
	base := path.Base(name)
	if lockFiles[base] {
		return typeNone
	}
	if codeNames[base] {
		return typeCode
	}
	if base == "README" || base == "LICENSE" || base == "CHANGELOG" || base == "AUTHORS" {
		return typeText
	}
	return typesByExt[strings.ToLower(path.Ext(base))]
}

// isBinary says whether data looks like a binary file: git's rule, a NUL
// byte in the first 8000 bytes.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// Document is a loaded file, cut into chunks.
type Document struct {
	Chunks   []Chunk
	Repaired bool // invalid UTF-8 was replaced
}

// ErrBinary is a file whose bytes are not text (a NUL in its first 8,000).
var ErrBinary = errors.New(ReasonBinary)

// Supported tells whether a file of this name is one lore reads.
func Supported(name string) bool { return typeOf(name) != typeNone }

// Extracted tells whether a file's indexed text is extracted from its
// bytes (HTML, PDF), so that its lines on disk are not the indexed ones.
func Extracted(name string) bool {
	ft := typeOf(name)
	return ft == typeHTML || ft == typePDF
}

// Load turns the contents of the file at path into chunks. path names the
// file's type and is read itself only for PDFs, by pdftotext.
func Load(ctx context.Context, path string, data []byte, opt ChunkOptions) (Document, error) {
	var res Document
	var src string
	ft := typeOf(path)
	if ft != typePDF && isBinary(data) {
		return res, ErrBinary
	}
	if ft == typePDF {
		text, err := pdfToText(ctx, path)
		if err != nil {
			return res, err
		}
		data = []byte(text)
		ft = typeText
	}
	if utf8.Valid(data) {
		src = string(data)
	} else {
		src = strings.ToValidUTF8(string(data), "\uFFFD")
		res.Repaired = true
	}
	src = strings.TrimPrefix(src, "\uFEFF")
	var bs []block
	var title string
	switch ft {
	case typeMarkdown:
		bs, title = loadMarkdown(src, false), frontMatterTitle(src)
	case typeMDX:
		bs, title = loadMarkdown(src, true), frontMatterTitle(src)
	case typeText:
		bs = loadText(src, false)
	case typeRST:
		bs = loadText(src, true)
	case typeHTML:
		bs, title = loadHTML(src)
	case typeCode:
		bs = loadCode(src)
	case typeStructured:
		res.Chunks = chunkStructured(src, structuredSyntax(path), opt)
		return res, nil
	}
	res.Chunks = chunkDocument(bs, ft == typeCode, title, opt)
	return res, nil
}
