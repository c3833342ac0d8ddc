package weaviatestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/internal/weaviatetest"
)

// buildBoth indexes files (path → text) into the local store and into
// the cluster under prefix, keyword only, as `lore index` does, and opens
// both.
func buildBoth(t *testing.T, c *weaviatetest.Cluster, prefix string, files map[string]string) (loc, wv index.Reader) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opt := index.BuildOptions{Name: "docs", Paths: []string{dir}, Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 1 << 20}
	var readers []index.Reader
	for _, s := range []index.Store{local.Store{Parent: t.TempDir()}, newStore(t, c, prefix)} {
		if _, err := s.Build(ctx, opt); err != nil {
			t.Fatalf("%s: build: %v", s.Kind(), err)
		}
		r, err := s.Open(ctx, "docs")
		if err != nil {
			t.Fatalf("%s: open: %v", s.Kind(), err)
		}
		t.Cleanup(func() { r.Close() })
		readers = append(readers, r)
	}
	return readers[0], readers[1]
}

// rankOf is where path comes in a keyword search of r for question
// (1-based), 0 when it is not in the first five. A small depth stands for
// a large index: the cluster returns 2 × depth candidates.
func rankOf(t *testing.T, r index.Reader, question, path string) int {
	t.Helper()
	res, err := r.SearchVector(context.Background(), question, nil, index.SearchOptions{Limit: 5, Depth: 5}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range res.Hits {
		if h.Path == path {
			return i + 1
		}
	}
	return 0
}

// testPartFound: a code chunk that matches a question only through the
// camelCase parts of an identifier (max idle connections: MaxIdleConns,
// whose part conns abbreviates "connections") is found on the cluster as
// locally, though thirty texts that say "max" fill the cluster's
// candidates. Without part_terms it was found only when it was already a
// candidate for another word.
func testPartFound(t *testing.T, c *weaviatetest.Cluster) {
	files := map[string]string{"pool.go": "package pool\n\nfunc tune(db *DB) {\n\tdb.SetMaxIdleConns(10)\n}\n"}
	for i := range 30 {
		files[fmt.Sprintf("notes/n%02d.md", i)] = fmt.Sprintf("# Note %d\n\nThe max is %d, and max again: max.\n", i, i)
	}
	sameRank(t, c, "Parts", files, "max idle connections", "pool.go")
}

// sameRank builds files in both stores and checks that path ranks for q
// on the cluster where it ranks locally (and that it ranks locally).
func sameRank(t *testing.T, c *weaviatetest.Cluster, class string, files map[string]string, q, path string) {
	t.Helper()
	loc, wv := buildBoth(t, c, class, files)
	agree(t, loc, wv, q, path)
}

// agree checks that path ranks for q on the cluster (wv) where it ranks
// locally (and that it ranks locally).
func agree(t *testing.T, loc, wv index.Reader, q, path string) {
	t.Helper()
	l, w := rankOf(t, loc, q, path), rankOf(t, wv, q, path)
	if l == 0 {
		t.Fatalf("the local store does not find %s for %q: the test is wrong", path, q)
	}
	if w != l {
		t.Errorf("%s for %q: rank %d on the cluster, %d locally (0: not in the first five)", path, q, w, l)
	}
}

// testDefinitionFound: a reference table that defines a name in its
// first cell (| backup | …) ranks for that name as locally, where the
// name is an identifier at path weight, though twenty pages that say the
// word three times each fill the cluster's candidates. Without the
// defined names in identifiers the table was not among them.
func testDefinitionFound(t *testing.T, c *weaviatetest.Cluster) {
	files := map[string]string{"reference.md": "# Settings\n\n| Setting | Meaning |\n|---|---|\n| backup | copies the data folder to the bucket every night |\n| region | where the bucket lives |\n"}
	for i := range 20 {
		files[fmt.Sprintf("guide/g%02d.md", i)] = fmt.Sprintf("# Guide %d\n\nA backup before you upgrade: the backup is the backup of step %d.\n", i, i)
	}
	sameRank(t, c, "Defs", files, "backup", "reference.md")
}

// testFormFound: a page that says a question's word another way (its
// full form, "repository" for "repo"; the compound two of its words make,
// "rollback" for "roll … back") ranks on the cluster as locally, though
// thirty pages that say the question's other word fill the candidates:
// the cluster is asked for the forms as well.
func testFormFound(t *testing.T, c *weaviatetest.Cluster) {
	files := map[string]string{
		"guide/repos.md":  "# Access\n\nA repository on a private server needs its credentials in a secret.\n",
		"guide/limits.md": "# Limits\n\nA rollback is refused while the new release is still running.\n",
	}
	for i := range 30 {
		files[fmt.Sprintf("notes/n%02d.md", i)] = fmt.Sprintf("# Note %d\n\nRelease %d: credentials, release credentials.\n", i, i)
	}
	loc, wv := buildBoth(t, c, "Forms", files)
	for q, path := range map[string]string{
		"repo credentials":            "guide/repos.md",
		"can I roll the release back": "guide/limits.md",
	} {
		agree(t, loc, wv, q, path)
	}
}

// testOldSchema: an index written by a lore whose chunks had no
// part_terms is refused, for reading and for a refresh, with one line
// that says to rebuild it; the rebuild mends it. Searched as it was,
// every search failed on the missing property.
func testOldSchema(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "Old")
	props := chunkProps
	chunkProps = slices.DeleteFunc(slices.Clone(chunkProps), func(p prop) bool { return p.name == "part_terms" })
	func() {
		defer func() { chunkProps = props }()
		fixture(t, s)
	}()
	want := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, index.ErrOldFormat) || !strings.Contains(err.Error(), "`lore index --rebuild`") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s an index without part_terms: %v; want ErrOldFormat, one line naming `lore index --rebuild`", what, err)
		}
	}
	_, err := s.Open(ctx, "docs")
	want("open", err)
	_, err = s.BeginWrite(ctx, index.WriteRequest{Name: "docs"})
	want("refresh", err)
	w := begin(t, s, "docs", true)
	write(t, w, fixtureVecs(), fileUpdate(1, "guide/setup.md", chOllama, chGarden), fileUpdate(1, "user.go", chUser, chDecoy))
	publish(t, w)
	r := open(t, s, "docs")
	if got := texts(search(t, r, "OLLAMA_HOST", nil, index.SearchOptions{Limit: 1}).Hits); len(got) != 1 || got[0] != "guide/setup.md:Set" {
		t.Errorf("after the rebuild: %v", got)
	}
}

// testWriteRace: of two builds that begin at once, one writes. The other
// (a second process, played here step by step) read the index's record
// before the first wrote its lease, and its write of the record with its
// own lease lands just after the first's: the first read its own lease
// straight back and wrote, and so did the other, two builds writing one
// generation's chunks and each other's record.
func testWriteRace(t *testing.T, c *weaviatetest.Cluster) {
	ctx := context.Background()
	s := newStore(t, c, "WRace")
	fixture(t, s)
	proceed := holdPause(t, s)
	other := newStore(t, c, "WRace")
	seen, err := other.readState(ctx, "docs", Quorum)
	if err != nil || seen == nil || seen.LockHolder != "" {
		t.Fatalf("the record before anyone writes: %+v %v", seen, err)
	}
	type result struct {
		w   *Writer
		err error
	}
	first := make(chan result, 1)
	go func() {
		w, err := s.beginWrite(ctx, index.WriteRequest{Name: "docs"})
		first <- result{w, err}
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
		if st, err := other.readState(ctx, "docs", Quorum); err == nil && st != nil && st.LockHolder != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first writer never wrote its lease")
		}
	}
	mine := other.newHolder()
	seen.LockHolder, seen.LockExpires = mine, other.lease.expiry()
	if err := other.writeState(ctx, seen); err != nil {
		t.Fatal(err)
	}
	proceed()
	res := <-first
	back, err := other.readState(ctx, "docs", Quorum)
	if err != nil {
		t.Fatal(err)
	}
	otherWrites := back != nil && back.LockHolder == mine
	if res.err == nil {
		defer res.w.Close()
	} else if !errors.Is(res.err, index.ErrLocked) {
		t.Errorf("the first writer: %v, want ErrLocked or the lease", res.err)
	}
	if (res.err == nil) == otherWrites {
		t.Errorf("first writer holds the lease: %v, the other: %v; want exactly one", res.err == nil, otherWrites)
	}
}
