// Package storetest is the conformance suite of the store seam (package
// index), in the spirit of testing/fstest.TestFS: Run builds small folders
// into a store through index.BuildTo, the one build pipeline, and checks
// what a user of lore relies on, the same way for every store: build,
// refresh, delete, rename, a rebuild invisible until it is published,
// resuming an interrupted build without embedding again, passages,
// Changed, Status, search by text and by vector, damage, locks, and
// List/Names/Remove.
//
// Where the seam's comments leave a meaning open, the suite fixes it for
// every store: Status.Changed lists the files new, modified (size or
// mtime) or deleted since the build in the sources present on this
// machine, and nothing for a source that is not here; Changed is false
// for a file whose source is not here.
//
// A store runs it from a test of its own package, with a Harness that
// makes a fresh empty store per case and, where a case needs a store's
// own hand (damaging an index), a hook; a case whose hook is nil is
// skipped. A case a store is known to fail is named in Harness.Known
// with what differs, and skipped with that: one difference per case, so
// that a skip hides nothing else. The in-memory store of package
// index/indextest passes all of it.
//
// The map of the file: Harness and Run first; then the cases, one
// function each, in the order Run lists them; then the helpers they share
// (folders, the counting embedder, a Target that pauses before Publish).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/wordvec"
)

// Harness is what Run needs of a store.
type Harness struct {
	// New returns an empty store and its write side (the same value when
	// the store is its own Target) for one case; it registers any cleanup
	// with t.
	New func(t *testing.T) (index.Store, index.Target)
	// Damage damages the built index name in s as a failing disk or a
	// cluster that lost data would: a reader must then find it damaged
	// (index.ErrCorrupt). Nil skips the damage case.
	Damage func(t *testing.T, s index.Store, name string)
	// Known names cases this store is known to fail today, with what
	// differs: they are skipped with "known difference: ..." so that the
	// run stays green while the difference is being fixed, and the list
	// says what is left.
	Known map[string]string
}

// A case is one behaviour, checked on a fresh store.
type testCase struct {
	name string
	run  func(t *testing.T, e *env)
}

// cases are the suite's behaviours, in the order they run.
var cases = []testCase{
	{"build", testBuild},
	{"refresh", testRefresh},
	{"delete", testDelete},
	{"rename", testRename},
	{"rebuild invisible until publish", testRebuild},
	{"resume without re-embedding", testResume},
	{"passages", testPassages},
	{"changed", testChanged},
	{"changed of a source not here", testSourceGoneChanged},
	{"status of a source not here", testSourceGoneStatus},
	{"status", testStatus},
	{"search by text", testSearchText},
	{"search by vector", testSearchVector},
	{"damage", testDamage},
	{"refresh of a damaged index", testRefreshDamaged},
	{"locks", testLocks},
	{"never built", testNeverBuilt},
	{"remembered of an index never built", testNeverBuiltRemembered},
	{"list names remove", testListRemove},
	{"refused first build", testRefusedFirstBuild},
	{"refused first build leaves no name", testRefusedFirstBuildNames},
}

// Run runs every case as a subtest of t, each on a store of its own.
func Run(t *testing.T, h Harness) {
	for k := range h.Known {
		if !slices.Contains(CaseNames(), k) {
			t.Errorf("Harness.Known names %q, which is no case of the suite", k)
		}
	}
	for _, c := range slices.Concat(cases, syncCases) {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := h.Known[c.name]; ok {
				t.Skip("known difference: " + why)
			}
			s, tg := h.New(t)
			c.run(t, &env{t: t, h: h, s: s, target: tg, ctx: context.Background()})
		})
	}
}

// CaseNames lists the cases Run runs, in order.
func CaseNames() []string {
	all := slices.Concat(cases, syncCases)
	out := make([]string, len(all))
	for i, c := range all {
		out[i] = c.name
	}
	return out
}

// env is one case's store and what it needs around it.
type env struct {
	t      *testing.T
	h      Harness
	s      index.Store
	target index.Target
	ctx    context.Context
}

const name = "docs"

// The folders the cases index. Each file holds a word no other file
// holds, so that a search for it has one right answer. guide.md has two
// sections of about 150 bytes, each a chunk of its own at a chunk size of
// 200, so that a change to one section and a range of lines can be told
// from the whole file (the line numbers are used by testPassages).
const (
	guideInstall = "Install lore with make, then copy the zanzibar binary into a folder on your PATH so that every shell finds it at once."
	guideConfig  = "Set OLLAMA_HOST to reach the quetzal server when it does not listen on the default port of the machine lore runs on."
	guideMD      = "# Guide\n\n## Install\n\n" + guideInstall + "\n\n## Config\n\n" + guideConfig + "\n"
)

func corpus() map[string]string {
	return map[string]string{
		"guide.md":       guideMD,
		"notes/todo.txt": "Remember the marmalade, and the eggs.\n",
		"api/server.go":  "package api\n\n// Serve answers every wombat that calls.\nfunc Serve() {}\n",
	}
}

func (e *env) opts(emb index.Embedder, paths ...string) index.BuildOptions {
	return index.BuildOptions{Name: name, Paths: paths, Embedder: emb, EmbedBatchSize: 2, Workers: 2,
		Chunk: ingest.ChunkOptions{Size: 200, Overlap: 0}, MaxFileSize: 1 << 20}
}

func (e *env) build(opt index.BuildOptions) index.Summary {
	e.t.Helper()
	sum, err := e.s.Build(e.ctx, opt)
	if err != nil {
		e.t.Fatalf("build: %v", err)
	}
	return sum
}

func (e *env) open() index.Reader {
	e.t.Helper()
	r, err := e.s.Open(e.ctx, name)
	if err != nil {
		e.t.Fatalf("open: %v", err)
	}
	e.t.Cleanup(func() { r.Close() })
	return r
}

// search is a keyword search of r.
func (e *env) search(r index.Reader, query string) []index.Hit {
	e.t.Helper()
	res, err := r.SearchVector(e.ctx, query, nil, index.SearchOptions{}, 0)
	if err != nil {
		e.t.Fatalf("search %q: %v", query, err)
	}
	return res.Hits
}

// paths are the hits' paths, for messages and comparisons.
func paths(hits []index.Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.Path)
	}
	return out
}

func texts(hits []index.Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.Text)
	}
	return out
}

// found tells whether a keyword search of r finds word in exactly the
// file want ("" for nowhere).
func (e *env) found(r index.Reader, word, want string) {
	e.t.Helper()
	got := paths(e.search(r, word))
	if want == "" && len(got) != 0 || want != "" && !slices.Equal(got, []string{want}) {
		e.t.Errorf("a search for %q finds %v, want %q", word, got, want)
	}
}

func testBuild(t *testing.T, e *env) {
	if g := e.s.Generation(e.ctx, name); g != "" {
		t.Errorf("Generation of an index not built: %q", g)
	}
	src := folder(t, corpus())
	emb := newCounter()
	sum := e.build(e.opts(emb, src))
	if sum.Index != name || sum.Embedder != "wordvec" || sum.FilesIndexed != 3 || sum.FilesUnchanged != 0 || sum.TotalFiles != 3 ||
		sum.Chunks < 4 || sum.TotalChunks != sum.Chunks || sum.ChunksEmbedded != sum.Chunks || emb.count() != sum.Chunks {
		t.Fatalf("first build: %+v; %d texts embedded", sum, emb.count())
	}
	r := e.open()
	if r.Generation() == "" || r.Generation() != e.s.Generation(e.ctx, name) {
		t.Errorf("the reader reads generation %q, the store names %q", r.Generation(), e.s.Generation(e.ctx, name))
	}
	if m := r.EmbedderModel(e.ctx); m != "wordvec" {
		t.Errorf("EmbedderModel = %q", m)
	}
	if n, err := r.Chunks(e.ctx); err != nil || n != sum.TotalChunks {
		t.Errorf("Chunks = %d, %v; the build said %d", n, err, sum.TotalChunks)
	}
	files, err := r.Files(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Join(f.Source, f.Path))
	}
	sort.Strings(got)
	want := []string{filepath.Join(src, "api/server.go"), filepath.Join(src, "guide.md"), filepath.Join(src, "notes/todo.txt")}
	if !slices.Equal(got, want) {
		t.Errorf("Files: %v, want %v", got, want)
	}
	if err := r.Check(e.ctx); err != nil {
		t.Errorf("Check of a whole index: %v", err)
	}
	if gs, err := r.CheckGraph(e.ctx); err != nil || !gs.Needed || gs.Problem != "" || gs.Vectors != sum.TotalChunks {
		t.Errorf("CheckGraph: %+v %v", gs, err)
	}
	// A sample (lore eval's questions) is the same for the same seed and
	// holds only chunks of the length asked for.
	a, err := r.SampleChunks(e.ctx, 2, 50, 7)
	b, _ := r.SampleChunks(e.ctx, 2, 50, 7)
	if err != nil || len(a) != 2 || !slices.Equal(texts(a), texts(b)) {
		t.Errorf("SampleChunks twice with one seed: %q and %q (%v)", texts(a), texts(b), err)
	}
	for _, h := range a {
		if len(h.Text) < 50 || h.Path == "" || h.Source != src {
			t.Errorf("SampleChunks of at least 50 characters: %+v", h)
		}
	}
	if rem, err := e.s.Remembered(e.ctx, name); err != nil || !slices.Equal(rem.Sources, []string{src}) || rem.Embedder != "wordvec" {
		t.Errorf("Remembered: %+v %v", rem, err)
	}

	// Nothing changed: nothing read again into the index, nothing embedded.
	emb.reset()
	again := e.build(e.opts(emb))
	if again.FilesIndexed != 0 || again.FilesUnchanged != 3 || again.ChunksEmbedded != 0 || emb.count() != 0 || again.TotalChunks != sum.TotalChunks {
		t.Errorf("a build with nothing changed: %+v; %d texts embedded", again, emb.count())
	}
}

// An edited file's chunks are replaced; only the chunk whose text changed
// is embedded; the other files are not read into the index again.
func testRefresh(t *testing.T, e *env) {
	src := folder(t, corpus())
	emb := newCounter()
	first := e.build(e.opts(emb, src))
	edit(t, src, "guide.md", strings.Replace(guideMD, "quetzal", "pangolin", 1))
	emb.reset()
	sum := e.build(e.opts(emb)) // no paths: the remembered sources
	if sum.FilesIndexed != 1 || sum.FilesUnchanged != 2 || sum.TotalChunks != first.TotalChunks {
		t.Errorf("refresh after editing one section: %+v", sum)
	}
	if texts := emb.all(); len(texts) != 1 || !strings.Contains(texts[0], "pangolin") {
		t.Errorf("embedded %q, want only the edited section", texts)
	}
	r := e.open()
	e.found(r, "quetzal", "")
	e.found(r, "pangolin", "guide.md")
	e.found(r, "zanzibar", "guide.md")
	if n, err := r.Chunks(e.ctx); err != nil || n != first.TotalChunks {
		t.Errorf("%d chunks after the refresh (%v), want %d: the old section's chunk is still there", n, err, first.TotalChunks)
	}
}

func testDelete(t *testing.T, e *env) {
	src := folder(t, corpus())
	emb := newCounter()
	first := e.build(e.opts(emb, src))
	if err := os.Remove(filepath.Join(src, "notes/todo.txt")); err != nil {
		t.Fatal(err)
	}
	emb.reset()
	sum := e.build(e.opts(emb))
	if sum.FilesRemoved != 1 || sum.FilesIndexed != 0 || sum.TotalFiles != 2 || sum.TotalChunks != first.TotalChunks-1 || emb.count() != 0 {
		t.Errorf("after deleting a file: %+v; %d texts embedded", sum, emb.count())
	}
	r := e.open()
	e.found(r, "marmalade", "")
	if _, err := r.ReadPassage(e.ctx, "notes/todo.txt", 0, 0, 0); !errors.Is(err, index.ErrNotIndexed) {
		t.Errorf("ReadPassage of a deleted file: %v", err)
	}
	st, err := r.Status(e.ctx)
	if err != nil || st.Documents != 2 || st.Chunks != sum.TotalChunks || st.Vectors != st.Chunks {
		t.Errorf("Status after a delete: %d documents, %d chunks, %d vectors (%v); want 2, %d, and no vector left unused",
			st.Documents, st.Chunks, st.Vectors, err, sum.TotalChunks)
	}
}

// A renamed file is the same text under another path: nothing is embedded.
func testRename(t *testing.T, e *env) {
	src := folder(t, corpus())
	emb := newCounter()
	e.build(e.opts(emb, src))
	if err := os.Rename(filepath.Join(src, "notes/todo.txt"), filepath.Join(src, "shopping.txt")); err != nil {
		t.Fatal(err)
	}
	emb.reset()
	sum := e.build(e.opts(emb))
	if sum.FilesIndexed != 1 || sum.FilesRemoved != 1 || sum.ChunksEmbedded != 0 || emb.count() != 0 {
		t.Errorf("after a rename: %+v; %d texts embedded", sum, emb.count())
	}
	r := e.open()
	e.found(r, "marmalade", "shopping.txt")
	if _, err := r.ReadPassage(e.ctx, "notes/todo.txt", 0, 0, 0); !errors.Is(err, index.ErrNotIndexed) {
		t.Errorf("ReadPassage by the old name: %v", err)
	}
	if p, err := r.ReadPassage(e.ctx, "shopping.txt", 0, 0, 0); err != nil || !strings.Contains(p.Text, "marmalade") {
		t.Errorf("ReadPassage by the new name: %+v %v", p, err)
	}
}

// A rebuild writes a new generation that readers, open or opened anew,
// see only once it is published: until then they read the old one.
func testRebuild(t *testing.T, e *env) {
	src := folder(t, corpus())
	e.build(e.opts(newCounter(), src))
	old := e.open()
	gen := e.s.Generation(e.ctx, name)
	edit(t, src, "notes/todo.txt", "Remember the quokka, and the eggs.\n")
	paused := false
	pause := func() {
		paused = true
		if g := e.s.Generation(e.ctx, name); g != gen {
			t.Errorf("the generation changed from %q to %q before Publish", gen, g)
		}
		fresh, err := e.s.Open(e.ctx, name)
		if err != nil {
			t.Fatalf("open during the rebuild: %v", err)
		}
		defer fresh.Close()
		for what, r := range map[string]index.Reader{"an open reader": old, "a reader opened during the rebuild": fresh} {
			if got := paths(e.search(r, "quokka")); len(got) != 0 {
				t.Errorf("%s sees the rebuild before Publish: %v", what, got)
			}
			if got := paths(e.search(r, "marmalade")); !slices.Equal(got, []string{"notes/todo.txt"}) {
				t.Errorf("%s does not read the old generation: %v", what, got)
			}
		}
	}
	opt := e.opts(newCounter(), src)
	opt.Rebuild = true
	if _, err := index.BuildTo(e.ctx, pauseTarget{e.target, pause}, opt); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if !paused {
		t.Fatal("the rebuild never published")
	}
	g := e.s.Generation(e.ctx, name)
	if g == "" || g == gen {
		t.Errorf("the generation after Publish is %q, before it %q", g, gen)
	}
	r := e.open()
	if r.Generation() != g {
		t.Errorf("a new reader reads %q, the store names %q", r.Generation(), g)
	}
	e.found(r, "quokka", "notes/todo.txt")
	e.found(r, "marmalade", "")
	// A reader opened before the rebuild reads the generation it opened,
	// or is told to open the index again (ErrCorrupt, the Weaviate store,
	// which drops the old generation's collections): never the new data
	// through the old reader, never some other failure.
	res, err := old.SearchVector(e.ctx, "marmalade", nil, index.SearchOptions{}, 0)
	if err != nil && !errors.Is(err, index.ErrCorrupt) || err == nil && !slices.Equal(paths(res.Hits), []string{"notes/todo.txt"}) {
		t.Errorf("a reader opened before the rebuild, after Publish: %v %v", paths(res.Hits), err)
	}
}

// A build cut short after some vectors were stored keeps them: the next
// build embeds only the rest, and no text is embedded twice.
func testResume(t *testing.T, e *env) {
	files := map[string]string{}
	for i := range 8 {
		files[fmt.Sprintf("f%d.md", i)] = fmt.Sprintf("# Note %d\n\nThe word of this note is word%dunique.\n", i, i)
	}
	src := folder(t, files)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	emb := newCounter()
	// Two calls get through; the third cancels the build.
	emb.stopAfter, emb.cancel = 2, cancel
	if _, err := e.s.Build(ctx, e.opts(emb, src)); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted build: %v", err)
	}
	// Two batches of two (fewer should the build have cut its files into
	// two groups, as it does when reading them takes over a second).
	before := emb.all()
	if len(before) == 0 || len(before) > 4 {
		t.Fatalf("%d texts embedded before the interrupt, want 4", len(before))
	}
	again := newCounter()
	sum := e.build(e.opts(again, src))
	after := again.all()
	for _, text := range after {
		if slices.Contains(before, text) {
			t.Errorf("%q embedded again", text)
		}
	}
	if missing := 8 - len(before); len(after) != missing || sum.ChunksEmbedded != missing || sum.TotalFiles != 8 || sum.TotalChunks != 8 {
		t.Errorf("the second build embedded %d texts: %+v; want the %d missing", len(after), sum, missing)
	}
	st, err := e.s.Status(e.ctx, name)
	if err != nil || st.Vectors != 8 || st.Chunks != 8 {
		t.Errorf("after the resumed build: %d vectors, %d chunks (%v); want 8 and 8", st.Vectors, st.Chunks, err)
	}
}

// Passages by relative and absolute path, by line range; nothing outside
// what the index holds.
func testPassages(t *testing.T, e *env) {
	root := t.TempDir()
	src := filepath.Join(root, "docs")
	write(t, src, corpus())
	write(t, src, map[string]string{"logo.png": "\x89PNG\r\n\x1a\n\x00\x00binary"})
	write(t, root, map[string]string{"outside.md": "# Outside\n\nNot a document of the index.\n"})
	e.build(e.opts(newCounter(), src))
	write(t, src, map[string]string{"later.md": "# Later\n\nWritten after the build.\n"})
	r := e.open()

	for _, p := range []string{"guide.md", filepath.Join(src, "guide.md")} {
		got, err := r.ReadPassage(e.ctx, p, 0, 0, 0)
		if err != nil {
			t.Errorf("ReadPassage(%q): %v", p, err)
			continue
		}
		if got.Source != src || got.Path != "guide.md" || !strings.Contains(got.Text, guideInstall) || !strings.Contains(got.Text, guideConfig) ||
			got.Start > 5 || got.End < 9 || got.Truncated {
			t.Errorf("ReadPassage(%q), the whole file: %+v", p, got)
		}
	}
	// guide.md's lines: 5 is the install section's text, 9 the config's.
	for _, c := range []struct {
		start, end int
		want, not  string
	}{{5, 5, guideInstall, guideConfig}, {9, 9, guideConfig, guideInstall}, {7, 0, guideConfig, guideInstall}} {
		got, err := r.ReadPassage(e.ctx, "guide.md", c.start, c.end, 0)
		if err != nil || !strings.Contains(got.Text, c.want) || strings.Contains(got.Text, c.not) || got.Start > c.start ||
			got.End < max(c.end, c.start) {
			t.Errorf("ReadPassage of lines %d-%d: %+v %v", c.start, c.end, got, err)
		}
	}
	if got, err := r.ReadPassage(e.ctx, "guide.md", 0, 0, 2); err != nil || !got.Truncated || strings.Contains(got.Text, guideConfig) {
		t.Errorf("ReadPassage of at most 2 lines: %+v %v", got, err)
	}
	if _, err := r.ReadPassage(e.ctx, "guide.md", 9, 5, 0); err == nil || errors.Is(err, index.ErrNotIndexed) {
		t.Errorf("ReadPassage of lines 9-5: %v, want the range refused", err)
	}
	for _, bad := range []string{"", "missing.md", "../outside.md", filepath.Join(root, "outside.md"), "docs/../../outside.md",
		"/etc/passwd", "logo.png", "later.md"} {
		if _, err := r.ReadPassage(e.ctx, bad, 0, 0, 0); !errors.Is(err, index.ErrNotIndexed) {
			t.Errorf("ReadPassage(%q): %v, want ErrNotIndexed", bad, err)
		}
	}
}

// Changed is false for a file as indexed (a touch that kept its bytes
// included) and true once its bytes changed, it was deleted, or the
// index does not hold it.
func testChanged(t *testing.T, e *env) {
	files := map[string]string{"same.md": "# Same\n\nUntouched.\n", "touched.md": "# Touched\n\nSame bytes.\n",
		"edited.md": "# Edited\n\nOld bytes.\n", "sized.md": "# Sized\n\nShort.\n", "gone.md": "# Gone\n\nDeleted.\n"}
	src := folder(t, files)
	e.build(e.opts(newCounter(), src))
	r := e.open()
	later := time.Now().Add(-10 * time.Minute)
	if err := os.Chtimes(filepath.Join(src, "touched.md"), later, later); err != nil {
		t.Fatal(err)
	}
	edit(t, src, "edited.md", "# Edited\n\nNew bytes.\n") // the same size
	edit(t, src, "sized.md", "# Sized\n\nLonger than it was.\n")
	if err := os.Remove(filepath.Join(src, "gone.md")); err != nil {
		t.Fatal(err)
	}
	write(t, src, map[string]string{"new.md": "# New\n\nNot indexed.\n"})
	for rel, want := range map[string]bool{"same.md": false, "touched.md": false, "edited.md": true, "sized.md": true, "gone.md": true, "new.md": true} {
		if got, err := r.Changed(e.ctx, src, rel); err != nil || got != want {
			t.Errorf("Changed(%s) = %v, %v; want %v", rel, got, err, want)
		}
	}
}

// A source that is not on this machine (an index built elsewhere, or a
// folder moved away) has no changes to tell (see Reader.Changed):
// Changed is false for its files ...
func testSourceGoneChanged(t *testing.T, e *env) {
	src := e.sourceGone()
	if got, err := e.open().Changed(e.ctx, src, "guide.md"); err != nil || got {
		t.Errorf("Changed of a file whose source is not here: %v %v", got, err)
	}
}

// ... and Status lists the source once as missing (not its files as
// deleted: `lore index` keeps them), and still counts the documents and
// names the source.
func testSourceGoneStatus(t *testing.T, e *env) {
	src := e.sourceGone()
	st, err := e.s.Status(e.ctx, name)
	missing := []index.Change{{Path: src, Change: "missing"}}
	if err != nil || !slices.Equal(st.Changed, missing) || st.Documents != 3 || !slices.Equal(st.Sources, []string{src}) {
		t.Errorf("Status with the source not here: changed %v, %d documents, sources %v (%v)", st.Changed, st.Documents, st.Sources, err)
	}
}

// sourceGone builds the corpus and moves its folder away.
func (e *env) sourceGone() string {
	e.t.Helper()
	src := folder(e.t, corpus())
	e.build(e.opts(newCounter(), src))
	if err := os.Rename(src, src+".moved"); err != nil {
		e.t.Fatal(err)
	}
	return src
}

// Status counts what the index holds and lists the files of its sources
// that are new, modified or deleted since the build.
func testStatus(t *testing.T, e *env) {
	files := corpus()
	files["logo.png"] = "\x89PNG\r\n\x1a\n\x00\x00binary"
	files["b.md"] = "# B\n\nTo be deleted.\n"
	src := folder(t, files)
	sum := e.build(e.opts(newCounter(), src))
	st, err := e.s.Status(e.ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	kinds := 0
	for _, n := range st.ChunksByKind {
		kinds += n
	}
	if st.Index != name || !slices.Equal(st.Sources, []string{src}) || st.Documents != 4 || st.Chunks != sum.TotalChunks || st.Vectors != st.Chunks ||
		st.Embedder != "wordvec" || st.Dimension != 64 || st.BuiltAt == nil || st.Damaged != "" || kinds != st.Chunks ||
		st.DocumentsByKind["markdown"] != 2 || st.DocumentsByKind["code"] != 1 || st.DocumentsByKind["text"] != 1 {
		t.Errorf("Status: %+v", st)
	}
	if len(st.Skipped) != 1 || st.Skipped[0].Path != filepath.Join(src, "logo.png") || st.Skipped[0].Reason == "" {
		t.Errorf("Status.Skipped: %+v", st.Skipped)
	}
	if len(st.Changed) != 0 {
		t.Errorf("Status.Changed right after the build: %+v", st.Changed)
	}

	edit(t, src, "guide.md", guideMD+"\nOne more line.\n")
	if err := os.Remove(filepath.Join(src, "b.md")); err != nil {
		t.Fatal(err)
	}
	write(t, src, map[string]string{"d.md": "# D\n\nNew since the build.\n"})
	want := []index.Change{{Path: filepath.Join(src, "b.md"), Change: "deleted"}, {Path: filepath.Join(src, "d.md"), Change: "new"},
		{Path: filepath.Join(src, "guide.md"), Change: "modified"}}
	st, err = e.s.Status(e.ctx, name)
	if err != nil || !slices.Equal(st.Changed, want) {
		t.Errorf("Store.Status after an edit, a delete and a new file: %+v %v\nwant %+v", st.Changed, err, want)
	}
	if st, err := e.open().Status(e.ctx); err != nil || !slices.Equal(st.Changed, want) {
		t.Errorf("Reader.Status: %+v %v\nwant %+v", st.Changed, err, want)
	}
}

// A search by a word finds the file that holds it first; the analyser is
// the same for every store (stems, identifiers).
func testSearchText(t *testing.T, e *env) {
	src := folder(t, corpus())
	e.build(e.opts(newCounter(), src))
	r := e.open()
	for _, c := range []struct{ query, want, holds string }{
		{"wombat", "api/server.go", "wombat"},
		{"wombats", "api/server.go", "wombat"}, // stemmed alike
		{"where is the marmalade?", "notes/todo.txt", "marmalade"},
		{"OLLAMA_HOST", "guide.md", guideConfig},
		{"ollama_host", "guide.md", guideConfig},
		{"zanzibar", "guide.md", guideInstall},
	} {
		res, err := r.SearchVector(e.ctx, c.query, nil, index.SearchOptions{}, 0)
		if err != nil {
			t.Fatalf("search %q: %v", c.query, err)
		}
		if res.Mode != "lexical" || len(res.Hits) == 0 {
			t.Errorf("search %q: %s, %v", c.query, res.Mode, paths(res.Hits))
			continue
		}
		h := res.Hits[0]
		if h.Path != c.want || h.Source != src || !strings.Contains(h.Text, c.holds) || h.LexicalRank != 1 || h.VectorRank != 0 ||
			h.Coverage <= 0 || h.Score <= 0 || h.Start < 1 || h.End < h.Start {
			t.Errorf("search %q: first hit %+v, want %s holding %q", c.query, h, c.want, c.holds)
		}
	}
	if hits := e.search(r, "xylophonist"); len(hits) != 0 {
		t.Errorf("a word no file holds finds %v", paths(hits))
	}
	res, err := index.Search(e.ctx, r, "wombat", index.SearchOptions{Embedder: wordvec.Embedder{Dim: 64}, Limit: 3})
	if err != nil || res.Mode != "hybrid" || len(res.Hits) == 0 || len(res.Hits) > 3 || res.Hits[0].Path != "api/server.go" {
		t.Errorf("hybrid search: %s %v %v", res.Mode, paths(res.Hits), err)
	}
}

// A search by a chunk's own vector finds that chunk first; a vector of
// another dimension is refused.
func testSearchVector(t *testing.T, e *env) {
	src := folder(t, corpus())
	emb := newCounter()
	e.build(e.opts(emb, src))
	r := e.open()
	var text string
	for _, s := range emb.all() {
		if strings.Contains(s, "marmalade") {
			text = s
		}
	}
	vec := emb.vector(text)
	if vec == nil {
		t.Fatalf("the marmalade chunk was not embedded: %q", emb.all())
	}
	res, err := r.SearchVector(e.ctx, "", vec, index.SearchOptions{NoLexical: true, Limit: 1}, 0)
	if err != nil || res.Mode != "vector" || len(res.Hits) != 1 {
		t.Fatalf("vector search: %s %v %v", res.Mode, paths(res.Hits), err)
	}
	if h := res.Hits[0]; h.Path != "notes/todo.txt" || !strings.Contains(h.Text, "marmalade") || h.VectorRank != 1 || h.LexicalRank != 0 {
		t.Errorf("vector search by the marmalade chunk's vector: %+v", h)
	}
	res, err = r.SearchVector(e.ctx, "marmalade", vec, index.SearchOptions{}, 0)
	if err != nil || res.Mode != "hybrid" || len(res.Hits) == 0 || res.Hits[0].Path != "notes/todo.txt" {
		t.Errorf("hybrid search: %s %v %v", res.Mode, paths(res.Hits), err)
	}
	if _, err := r.SearchVector(e.ctx, "marmalade", []float32{1, 0, 0}, index.SearchOptions{}, 0); !errors.Is(err, index.ErrDimension) {
		t.Errorf("a 3-dimensional query vector: %v, want ErrDimension", err)
	}
}

// A damaged index says so, with the fix, when it is opened or checked;
// Status still names it and its sources; List marks it; a rebuild from
// its remembered sources mends it.
func testDamage(t *testing.T, e *env) {
	if e.h.Damage == nil {
		t.Skip("the harness cannot damage an index")
	}
	src := folder(t, corpus())
	e.build(e.opts(newCounter(), src))
	e.h.Damage(t, e.s, name)

	r, err := e.s.Open(e.ctx, name)
	if err == nil {
		defer r.Close()
		err = r.Check(e.ctx)
	}
	wantDamaged(t, "Open, or Check of what it opened", err)
	st, err := e.s.Status(e.ctx, name)
	if err != nil || st.Damaged == "" || st.Index != name || !slices.Equal(st.Sources, []string{src}) {
		t.Errorf("Status of a damaged index: %+v %v", st, err)
	}
	list, err := e.s.List(e.ctx)
	if i := slices.IndexFunc(list, func(in index.Info) bool { return in.Name == name }); err != nil || i < 0 || list[i].Damaged == "" {
		t.Errorf("List shows the damaged index as %+v (%v)", list, err)
	}
	opt := e.opts(newCounter())
	opt.Rebuild = true
	if _, err := e.s.Build(e.ctx, opt); err != nil {
		t.Fatalf("a rebuild from the remembered sources: %v", err)
	}
	r2 := e.open()
	if err := r2.Check(e.ctx); err != nil {
		t.Errorf("Check after the rebuild: %v", err)
	}
	e.found(r2, "wombat", "api/server.go")
}

// A refresh does not write into a damaged index (nor call its files
// unchanged): it refuses with the fix, a rebuild.
func testRefreshDamaged(t *testing.T, e *env) {
	if e.h.Damage == nil {
		t.Skip("the harness cannot damage an index")
	}
	src := folder(t, corpus())
	e.build(e.opts(newCounter(), src))
	e.h.Damage(t, e.s, name)
	sum, err := e.s.Build(e.ctx, e.opts(newCounter()))
	wantDamaged(t, "a refresh", err)
	if sum.FilesUnchanged != 0 {
		t.Errorf("the refresh of a damaged index counted %d files unchanged", sum.FilesUnchanged)
	}
}

func wantDamaged(t *testing.T, what string, err error) {
	t.Helper()
	var d *index.DamagedError
	if !errors.Is(err, index.ErrCorrupt) || !errors.As(err, &d) {
		t.Errorf("%s: %v, want the index reported damaged", what, err)
		return
	}
	if d.Index != name || d.Reason == "" || !strings.Contains(err.Error(), "lore index") || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: %q does not say in one line which index, what happened and how to fix it", what, err)
	}
}

// One writer per index: a second one, a build or a removal is refused
// with ErrLocked while a Writer is open; readers are not held up; the
// lock goes with Close.
func testLocks(t *testing.T, e *env) {
	src := folder(t, corpus())
	e.build(e.opts(nil, src))
	w, err := e.target.BeginWrite(e.ctx, index.WriteRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			w.Close()
		}
	}()
	if w2, err := e.target.BeginWrite(e.ctx, index.WriteRequest{Name: name}); !errors.Is(err, index.ErrLocked) {
		if err == nil {
			w2.Close()
		}
		t.Errorf("a second BeginWrite: %v, want ErrLocked", err)
	}
	if w2, err := e.target.BeginWrite(e.ctx, index.WriteRequest{Name: name, Rebuild: true}); !errors.Is(err, index.ErrLocked) {
		if err == nil {
			w2.Close()
		}
		t.Errorf("a second BeginWrite, for a rebuild: %v, want ErrLocked", err)
	}
	if _, err := e.s.Build(e.ctx, e.opts(nil)); !errors.Is(err, index.ErrLocked) {
		t.Errorf("a build: %v, want ErrLocked", err)
	}
	if _, err := e.s.Remove(e.ctx, name, nil); !errors.Is(err, index.ErrLocked) {
		t.Errorf("Remove: %v, want ErrLocked", err)
	}
	e.found(e.open(), "wombat", "api/server.go")
	closed = true
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Build(e.ctx, e.opts(nil)); err != nil {
		t.Errorf("a build once the writer closed: %v", err)
	}
}

// An index never built is ErrNoIndex to every call that names it; an
// empty store lists nothing.
func testNeverBuilt(t *testing.T, e *env) {
	if names, err := e.s.Names(e.ctx); err != nil || len(names) != 0 {
		t.Errorf("Names of an empty store: %v %v", names, err)
	}
	if list, err := e.s.List(e.ctx); err != nil || len(list) != 0 {
		t.Errorf("List of an empty store: %v %v", list, err)
	}
	for _, op := range []struct {
		what string
		err  error
	}{
		{"Open", func() error { _, err := e.s.Open(e.ctx, "nothing"); return err }()},
		{"Status", func() error { _, err := e.s.Status(e.ctx, "nothing"); return err }()},
		{"Remove", func() error { _, err := e.s.Remove(e.ctx, "nothing", nil); return err }()},
	} {
		if !errors.Is(op.err, index.ErrNoIndex) {
			t.Errorf("%s of an index never built: %v, want ErrNoIndex", op.what, op.err)
		}
	}
}

// What a rebuild of an index never built would start from: nothing, and
// ErrNoIndex says so.
func testNeverBuiltRemembered(t *testing.T, e *env) {
	if _, err := e.s.Remembered(e.ctx, "nothing"); !errors.Is(err, index.ErrNoIndex) {
		t.Errorf("Remembered of an index never built: %v, want ErrNoIndex", err)
	}
}

func testListRemove(t *testing.T, e *env) {
	src := folder(t, corpus())
	for _, n := range []string{"zeta", "alpha"} {
		opt := e.opts(newCounter(), src)
		opt.Name = n
		e.build(opt)
	}
	if names, err := e.s.Names(e.ctx); err != nil || !slices.Equal(names, []string{"alpha", "zeta"}) {
		t.Errorf("Names: %v %v, want alpha and zeta, sorted", names, err)
	}
	list, err := e.s.List(e.ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("List: %+v %v", list, err)
	}
	for i, n := range []string{"alpha", "zeta"} {
		if in := list[i]; in.Name != n || !in.Built || in.Chunks < 4 || in.Embedder != "wordvec" || in.BuiltAt == nil || in.Damaged != "" || in.Path == "" {
			t.Errorf("List[%d]: %+v", i, in)
		}
	}
	no := errors.New("no")
	if _, err := e.s.Remove(e.ctx, "zeta", func(index.Info) error { return no }); err != no {
		t.Errorf("Remove, refused by confirm: %v", err)
	}
	var asked index.Info
	if _, err := e.s.Remove(e.ctx, "zeta", func(in index.Info) error { asked = in; return nil }); err != nil {
		t.Fatal(err)
	}
	if asked.Name != "zeta" || asked.Chunks < 4 {
		t.Errorf("confirm was asked about %+v", asked)
	}
	if names, err := e.s.Names(e.ctx); err != nil || !slices.Equal(names, []string{"alpha"}) {
		t.Errorf("Names after removing zeta: %v %v", names, err)
	}
	if _, err := e.s.Open(e.ctx, "zeta"); !errors.Is(err, index.ErrNoIndex) {
		t.Errorf("Open of a removed index: %v", err)
	}
	if g := e.s.Generation(e.ctx, "zeta"); g != "" {
		t.Errorf("Generation of a removed index: %q", g)
	}
	r, err := e.s.Open(e.ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if hits := e.search(r, "wombat"); len(hits) != 1 {
		t.Errorf("the other index after a removal: %v", paths(hits))
	}
}

// A first build refused before it wrote anything (no sources, an embedder
// that does not answer) leaves no index behind: the natural retry, with
// another embedder, works.
func testRefusedFirstBuild(t *testing.T, e *env) {
	if _, err := e.s.Build(e.ctx, e.opts(nil)); !errors.Is(err, index.ErrNoSources) {
		t.Errorf("a first build with no folder: %v, want ErrNoSources", err)
	}
	src := folder(t, corpus())
	down := newCounter()
	down.down = errors.New("could not connect to the embedder")
	if _, err := e.s.Build(e.ctx, e.opts(down, src)); !errors.Is(err, down.down) {
		t.Errorf("a first build whose embedder is down: %v", err)
	}
	if _, err := e.s.Open(e.ctx, name); !errors.Is(err, index.ErrNoIndex) {
		t.Errorf("Open after the refused builds: %v, want ErrNoIndex", err)
	}
	sum := e.build(e.opts(nil, src))
	if sum.Embedder != "none" || sum.FilesIndexed != 3 {
		t.Errorf("the retry without an embedder: %+v", sum)
	}
}

// Nor does a refused first build leave a name for List, Names and shell
// completion to offer.
func testRefusedFirstBuildNames(t *testing.T, e *env) {
	e.s.Build(e.ctx, e.opts(nil))
	down := newCounter()
	down.down = errors.New("could not connect to the embedder")
	e.s.Build(e.ctx, e.opts(down, folder(t, corpus())))
	if names, err := e.s.Names(e.ctx); err != nil || len(names) != 0 {
		t.Errorf("Names after the refused builds: %v %v", names, err)
	}
	if list, err := e.s.List(e.ctx); err != nil || len(list) != 0 {
		t.Errorf("List after the refused builds: %+v %v", list, err)
	}
}

// folder writes files into a new folder, dated an hour ago as files
// written by a person before indexing would be (out of the build's racy
// window, in which a file is read again to be sure).
func folder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, files)
	return dir
}

var hourAgo = time.Now().Add(-time.Hour)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
}

// edit rewrites a file and dates it half an hour ago: later than it was,
// and still out of the racy window.
func edit(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-30 * time.Minute)
	if err := os.Chtimes(p, then, then); err != nil {
		t.Fatal(err)
	}
}

// counter is the wordvec embedder (64 dimensions) that records every text
// it embeds, with its vector. With stopAfter set it cancels the build on
// the call after that many, as an interrupt would; with down set, it does
// not answer.
type counter struct {
	wordvec.Embedder
	mu        sync.Mutex
	texts     []string
	vecs      map[string][]float32
	calls     int
	stopAfter int
	cancel    func()
	down      error
}

func newCounter() *counter {
	return &counter{Embedder: wordvec.Embedder{Dim: 64}, vecs: map[string][]float32{}}
}

func (c *counter) Check(ctx context.Context) (int, error) {
	if c.down != nil {
		return 0, c.down
	}
	return c.Embedder.Check(ctx)
}

func (c *counter) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down != nil {
		return nil, c.down
	}
	if c.cancel != nil && c.calls == c.stopAfter {
		c.cancel()
		return nil, context.Canceled
	}
	c.calls++
	vecs, err := c.Embedder.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, text := range texts {
		c.texts = append(c.texts, text)
		c.vecs[text] = vecs[i]
	}
	return vecs, nil
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.texts)
}

func (c *counter) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.texts)
}

func (c *counter) vector(text string) []float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.vecs[text]
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts, c.calls = nil, 0
}

// pauseTarget runs pause before its Writer publishes: the moment a
// rebuild has written everything and readers must not see it yet.
type pauseTarget struct {
	index.Target
	pause func()
}

func (p pauseTarget) BeginWrite(ctx context.Context, req index.WriteRequest) (index.Writer, error) {
	w, err := p.Target.BeginWrite(ctx, req)
	if err != nil {
		return nil, err
	}
	return pauseWriter{w, p.pause}, nil
}

type pauseWriter struct {
	index.Writer
	pause func()
}

func (w pauseWriter) Publish(ctx context.Context, p index.PublishOptions) (int, int, error) {
	w.pause()
	return w.Writer.Publish(ctx, p)
}
