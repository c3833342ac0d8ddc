package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/atomicfile"
)

// An index directory holds generations: CURRENT names the one readers use;
// NEXT names a --rebuild in progress. A rebuild fills a new generation and
// then flips CURRENT, so readers keep working on the old one meanwhile and a
// killed rebuild costs nothing but its own work (which the next run resumes).
//
//	indexes/NAME/lock
//	indexes/NAME/CURRENT       "g1763700000000000000"
//	indexes/NAME/g.../index.db (+ -wal, -shm)
//	indexes/NAME/g.../graph.hnsw
//	indexes/NAME/g.../readers  (a shared lock for each open reader)
const (
	currentFile = "CURRENT"
	nextFile    = "NEXT"
	dbFile      = "index.db"
	graphFile   = "graph.hnsw"
	lockFile    = "lock"
	readersFile = "readers"
)

func readPointer(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	gen := strings.TrimSpace(string(b))
	if gen == "" || strings.ContainsAny(gen, `/\`) || gen[0] != 'g' {
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, gen, dbFile)); err != nil {
		return ""
	}
	return gen
}

func writePointer(dir, name, gen string) error {
	return atomicfile.Write(filepath.Join(dir, name), 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, gen+"\n")
		return err
	})
}

func newGeneration() string { return "g" + strconv.FormatInt(time.Now().UnixNano(), 10) }

// removeStaleGenerations deletes generation folders that neither pointer
// names: leftovers of finished rebuilds. A generation a reader still has
// open is kept (its readers lock is held shared): the reader's database
// opens new connections as requests come, and a connection cannot be
// opened in a folder that is gone. The last reader out removes it
// (Index.Close), or the next build does. Call it holding the index lock.
func removeStaleGenerations(dir string) {
	for _, aside := range retireStaleGenerations(dir) {
		os.RemoveAll(aside)
	}
}

// retireStaleGenerations renames aside, under each one's exclusive
// readers lock, the stale generations no reader holds, and returns the
// new paths, for the caller to delete (the index lock need not be held
// for that). Renamed first, never deleted in place: a reader that opened
// the readers file meanwhile cannot create it again in a folder being
// emptied (and then an empty index.db beside it); its open fails, and it
// reads the pointer again (holdGeneration). Leftovers of a removal cut
// short are returned too.
func retireStaleGenerations(dir string) []string {
	keep := map[string]bool{readPointer(dir, currentFile): true, readPointer(dir, nextFile): true}
	entries, _ := os.ReadDir(dir)
	var asides []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() && strings.HasPrefix(name, ".g") && strings.HasSuffix(name, removingSuffix) {
			asides = append(asides, filepath.Join(dir, name))
			continue
		}
		if !e.IsDir() || !strings.HasPrefix(name, "g") || keep[name] {
			continue
		}
		genDir := filepath.Join(dir, name)
		aside := filepath.Join(dir, "."+name+removingSuffix)
		f, err := os.OpenFile(filepath.Join(genDir, readersFile), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			if os.Rename(genDir, aside) == nil { // not a generation lore can use
				asides = append(asides, aside)
			}
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && os.Rename(genDir, aside) == nil {
			asides = append(asides, aside)
		}
		f.Close()
	}
	return asides
}

// holdGeneration takes a reader's shared lock on the generation in genDir,
// which keeps removeStaleGenerations from deleting it until the returned
// file is closed. It fails when the generation is gone or going.
func holdGeneration(genDir string) (*os.File, error) {
	path := filepath.Join(genDir, readersFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	// The lock must be on the file that is still there: a removal may
	// have unlinked it between the open and the lock.
	held, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, fmt.Errorf("generation %s was removed", filepath.Base(genDir))
	}
	return f, nil
}

// lock is an exclusive advisory lock on an index directory. The kernel
// drops it when the process dies, so a kill -9 never leaves a stale lock.
type lock struct{ f *os.File }

func acquireLock(dir string) (*lock, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := io.ReadAll(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(b))
			if holder != "" {
				holder = " (pid " + holder + ")"
			}
			return nil, fmt.Errorf("%w: another `lore index`%s is updating this index: wait for it to finish", index.ErrLocked, holder)
		}
		return nil, fmt.Errorf("lock index: %w", err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &lock{f: f}, nil
}

// removeEmptyIndexDir deletes dir when it holds nothing but its lock
// file, which the caller holds. A build that opened the lock file
// meanwhile finds it held and gives up; one that made the folder just
// before it went creates it again (localTarget.BeginWrite).
func removeEmptyIndexDir(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != lockFile {
		return
	}
	os.Remove(filepath.Join(dir, lockFile))
	os.Remove(dir)
}

func (l *lock) release() {
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}
