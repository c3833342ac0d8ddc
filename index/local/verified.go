package local

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// A live-sync batch used to read every page of the index before writing
// to it (checkPages in BeginWrite: about 280 ms of a one-file save at 100k
// chunks, in proportion to the index, not to the save). What that check
// protects against is a database damaged since it was last written: a
// flipped byte, a truncation, another program writing into it, a writer
// that died. A file this process itself left behind after a published
// build, and that nothing has touched since, holds nothing new to check:
// the next writer of this process skips the check for it.
//
// "Nothing has touched it" is decided by the files' identity, size and
// modification time (the database and its write-ahead log), taken while
// the writer still holds the index lock. Any write by anyone changes the
// modification time, provided it falls on a later tick of the file
// system's clock than the last write this process made: Linux stamps
// files with a coarse clock (one jiffy, at most 10 ms), so the stamp is
// only taken once that clock has moved on (stampSettle), and a file whose
// times have no sub-second part (a file system of whole seconds) is never
// trusted. Anything else (a failed or unpublished build, a stale writing
// mark, another process) leaves no stamp, and the next writer checks
// every page as before.
var verified = struct {
	sync.Mutex
	m map[string]dbStamp
}{m: map[string]dbStamp{}}

// stampSettle is how long after the files' last modification a stamp is
// taken: longer than a tick of the kernel's coarse clock.
const stampSettle = 20 * time.Millisecond

// fileStamp is what tells one version of a file from another.
type fileStamp struct {
	exists   bool
	dev, ino uint64
	size     int64
	mtime    int64 // nanoseconds
}

type dbStamp struct{ db, wal fileStamp }

func stampFile(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, err
	}
	s := fileStamp{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino = uint64(st.Dev), uint64(st.Ino)
	}
	return s, nil
}

func stampDB(path string) (dbStamp, bool) {
	db, err1 := stampFile(path)
	wal, err2 := stampFile(path + "-wal")
	if err1 != nil || err2 != nil || !db.exists {
		return dbStamp{}, false
	}
	return dbStamp{db: db, wal: wal}, true
}

// takeVerified reports whether the database at path is as this process's
// last published build left it, and forgets that: the writer that now
// opens it must publish to leave a stamp again.
func takeVerified(path string) bool {
	verified.Lock()
	want, ok := verified.m[path]
	delete(verified.m, path)
	verified.Unlock()
	if !ok {
		return false
	}
	now, ok := stampDB(path)
	return ok && now == want
}

// rememberVerified stamps the database at path after a published build
// closed it, under the index lock.
func rememberVerified(path string) {
	s, ok := stampDB(path)
	if !ok {
		return
	}
	last := max(s.db.mtime, s.wal.mtime)
	if last%int64(time.Second) == 0 {
		return // whole seconds: a later write may keep this very time
	}
	if wait := time.Until(time.Unix(0, last).Add(stampSettle)); wait > 0 {
		time.Sleep(wait)
		// Still this process's lock and its files: stamp them as they are.
		if s, ok = stampDB(path); !ok {
			return
		}
	}
	verified.Lock()
	verified.m[path] = s
	verified.Unlock()
}

// forgetVerified drops any stamp of the database at path.
func forgetVerified(path string) {
	verified.Lock()
	delete(verified.m, path)
	verified.Unlock()
}
