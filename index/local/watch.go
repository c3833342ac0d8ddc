package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/atomicfile"
)

// A watched index has two more files beside its generations:
//
//	indexes/NAME/watch.lock  the watcher's exclusive flock (its pid inside)
//	indexes/NAME/sync.json   its Freshness, rewritten after each batch
//
// The kernel drops the flock when the watcher dies, so a reader that can
// take it knows nobody watches, whatever sync.json still says.
const (
	watchLockFile = "watch.lock"
	syncFile      = "sync.json"
)

// Watch takes the watch lease of the index name. The index must exist
// (a first build makes it): watching never creates a phantom index.
func (l Store) Watch(_ context.Context, name string) (index.WatchLease, error) {
	dir := l.Dir(name)
	if readPointer(dir, currentFile) == "" {
		return nil, fmt.Errorf("%w %q: build it with `lore index PATH`", index.ErrNoIndex, name)
	}
	f, err := os.OpenFile(filepath.Join(dir, watchLockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("watch index %q: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := io.ReadAll(io.LimitReader(f, 64))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is watching index %q", index.ErrLocked, describeHolder(string(b)), name)
		}
		return nil, fmt.Errorf("watch index %q: %w", name, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &watchLease{dir: dir, f: f}, nil
}

func describeHolder(pid string) string {
	if pid = strings.TrimSpace(pid); pid != "" {
		return "lore (pid " + pid + ")"
	}
	return "another lore"
}

type watchLease struct {
	dir string
	mu  sync.Mutex
	f   *os.File
}

func (l *watchLease) Record(_ context.Context, f index.Freshness) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("watch lease closed")
	}
	return writeFreshness(l.dir, f)
}

func (l *watchLease) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := writeFreshness(l.dir, index.Freshness{State: index.WatchStopped})
	if os.IsNotExist(err) {
		err = nil // the index was removed while watched
	}
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
	return err
}

func writeFreshness(dir string, f index.Freshness) error {
	b, err := json.Marshal(freshnessFile(f))
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, syncFile), 0o600, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// freshnessFile is sync.json's shape (index.Freshness has no JSON tags:
// the wire package owns what is printed).
type freshnessFile index.Freshness

// maxSyncFile bounds the read of sync.json: a damaged one is no reason
// to read without end.
const maxSyncFile = 1 << 20

// Freshness reads what the watcher of name last recorded. With nobody
// holding the watch lock the index is not watched, whatever the file says.
func (l Store) Freshness(_ context.Context, name string) (index.Freshness, error) {
	return readFreshness(l.Dir(name))
}

func readFreshness(dir string) (index.Freshness, error) {
	stopped := index.Freshness{State: index.WatchStopped}
	if !watched(dir) {
		return stopped, nil
	}
	fh, err := os.Open(filepath.Join(dir, syncFile))
	if err != nil {
		return stopped, nil
	}
	defer fh.Close()
	var f freshnessFile
	if err := json.NewDecoder(io.LimitReader(fh, maxSyncFile)).Decode(&f); err != nil {
		return stopped, nil // being replaced, or damaged: nothing known
	}
	return index.Freshness(f), nil
}

// watched tells whether a process holds dir's watch lock.
func watched(dir string) bool {
	f, err := os.Open(filepath.Join(dir, watchLockFile))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
