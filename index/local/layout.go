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
const (
	currentFile = "CURRENT"
	nextFile    = "NEXT"
	dbFile      = "index.db"
	graphFile   = "graph.hnsw"
	lockFile    = "lock"
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
// names: leftovers of finished rebuilds. Readers that still have one open
// keep their open files; Unix frees them when they close.
func removeStaleGenerations(dir string) {
	keep := map[string]bool{readPointer(dir, currentFile): true, readPointer(dir, nextFile): true}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "g") && !keep[e.Name()] {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
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
