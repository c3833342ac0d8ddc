package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// vcsDirs are never descended into.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true, "_darcs": true, ".jj": true, ".fossil": true}

// An Entry is a file found under a source root, or one that could not be
// looked at (Reason set).
type Entry struct {
	Rel    string // slash-separated, relative to the root
	Abs    string
	Size   int64
	MTime  time.Time
	Reason string
	id     fileID // zero when unknown
}

// Walked is one root's files, or why it could not be walked.
type Walked struct {
	Entries []Entry
	Err     error
}

// WalkRoots walks every root (a folder or a file) and keeps each file
// once, whatever path reached it: a file under two roots (a folder and a
// folder inside it) or reached twice through symbolic or hard links
// belongs to the root listed first and to the first path the walk met.
func WalkRoots(roots []string) []Walked {
	out := make([]Walked, len(roots))
	claimed := map[fileID]bool{}
	for i, root := range roots {
		entries, err := walkSource(root)
		kept := entries[:0]
		for _, e := range entries {
			if e.id != (fileID{}) {
				if claimed[e.id] {
					continue
				}
				claimed[e.id] = true
			}
			kept = append(kept, e)
		}
		out[i] = Walked{kept, err}
	}
	return out
}

// walkSource lists the files under root, honouring .gitignore and
// .loreignore files at every level, following symbolic links once (a link
// back into a directory already on the path is a loop and is skipped), and
// recording anything unreadable instead of stopping.
func walkSource(root string) ([]Entry, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", root, err)
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return []Entry{{Rel: filepath.Base(root), Abs: root, Reason: notRegular(fi.Mode())}}, nil
		}
		id, _ := idOf(fi)
		return []Entry{{Rel: filepath.Base(root), Abs: root, Size: fi.Size(), MTime: fi.ModTime(), id: id}}, nil
	}
	w := &walker{root: root, visited: map[fileID]bool{}}
	w.dir(root, "", nil)
	return w.out, nil
}

type fileID struct{ dev, ino uint64 }

type walker struct {
	root    string
	out     []Entry
	visited map[fileID]bool
}

func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

func (w *walker) dir(abs, rel string, rules []ignoreRule) {
	fi, err := os.Stat(abs)
	if err != nil {
		w.skip(rel, abs, "unreadable: "+ShortErr(err))
		return
	}
	if id, ok := idOf(fi); ok {
		if w.visited[id] {
			w.skip(rel, abs, "symlink loop")
			return
		}
		w.visited[id] = true
		defer delete(w.visited, id)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		w.skip(rel, abs, "unreadable directory: "+ShortErr(err))
		return
	}
	rules = append(rules[:len(rules):len(rules)], readIgnoreFile(filepath.Join(abs, ".gitignore"), rel)...)
	rules = append(rules, readIgnoreFile(filepath.Join(abs, ".loreignore"), rel)...)
	for _, e := range entries {
		name := e.Name()
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		childAbs := filepath.Join(abs, name)
		isDir := e.IsDir()
		var info os.FileInfo
		if e.Type()&os.ModeSymlink != 0 {
			info, err = os.Stat(childAbs)
			if err != nil {
				w.skip(childRel, childAbs, "broken symlink")
				continue
			}
			isDir = info.IsDir()
		}
		if isDir && vcsDirs[name] {
			continue
		}
		if ignored(rules, childRel, isDir) {
			continue
		}
		if isDir {
			w.dir(childAbs, childRel, rules)
			continue
		}
		if name == ".gitignore" || name == ".loreignore" {
			continue
		}
		if info == nil {
			if info, err = e.Info(); err != nil {
				w.skip(childRel, childAbs, "unreadable: "+ShortErr(err))
				continue
			}
		}
		if !info.Mode().IsRegular() {
			w.skip(childRel, childAbs, notRegular(info.Mode()))
			continue
		}
		id, _ := idOf(info)
		w.out = append(w.out, Entry{Rel: childRel, Abs: childAbs, Size: info.Size(), MTime: info.ModTime(), id: id})
	}
}

// notRegular is the skip reason of a file that is not a regular one.
// Reading a named pipe would wait for a writer forever, and a device may
// never end.
func notRegular(m os.FileMode) string {
	kind := "a special file"
	switch {
	case m&os.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	case m&os.ModeDevice != 0:
		kind = "a device"
	}
	return ReasonNotRegular + " (" + kind + ")"
}

func (w *walker) skip(rel, abs, reason string) {
	if rel == "" {
		rel = "."
	}
	w.out = append(w.out, Entry{Rel: rel, Abs: abs, Reason: reason})
}

// A source is a folder or a single file. A file source's one document is
// named by its base name, so the folder it is relative to is the file's
// own folder, not the root: the one place that knows is here.
//
// SourceDir returns the folder a document path of the source is relative to.
func SourceDir(root, rel string) string {
	if rel == filepath.Base(root) {
		// A folder holding a file of its own name is the rare case, so only
		// then is the disk asked; a source that is gone was most likely
		// the file itself.
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			return filepath.Dir(root)
		}
	}
	return root
}

// JoinSource is the absolute path of a document of the source.
func JoinSource(root, rel string) string { return filepath.Join(SourceDir(root, rel), rel) }

// ShortErr drops the path an *os.PathError repeats, keeping the reason.
func ShortErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return strings.TrimSpace(err.Error())
}
