package index

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

// A walkEntry is a file found under a source root, or one that could not be
// looked at (Reason set).
type walkEntry struct {
	Rel    string // slash-separated, relative to the root
	Abs    string
	Size   int64
	MTime  time.Time
	Reason string
}

// walkSource lists the files under root, honouring .gitignore and
// .loreignore files at every level, following symbolic links once (a link
// back into a directory already on the path is a loop and is skipped), and
// recording anything unreadable instead of stopping.
func walkSource(root string) ([]walkEntry, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", root, err)
	}
	if !fi.IsDir() {
		return []walkEntry{{Rel: filepath.Base(root), Abs: root, Size: fi.Size(), MTime: fi.ModTime()}}, nil
	}
	w := &walker{root: root, visited: map[fileID]bool{}}
	w.dir(root, "", nil)
	return w.out, nil
}

type fileID struct{ dev, ino uint64 }

type walker struct {
	root    string
	out     []walkEntry
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
		w.skip(rel, abs, "unreadable: "+shortErr(err))
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
		w.skip(rel, abs, "unreadable directory: "+shortErr(err))
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
				w.skip(childRel, childAbs, "unreadable: "+shortErr(err))
				continue
			}
		}
		if !info.Mode().IsRegular() {
			continue // sockets, devices, fifos
		}
		w.out = append(w.out, walkEntry{Rel: childRel, Abs: childAbs, Size: info.Size(), MTime: info.ModTime()})
	}
}

func (w *walker) skip(rel, abs, reason string) {
	if rel == "" {
		rel = "."
	}
	w.out = append(w.out, walkEntry{Rel: rel, Abs: abs, Reason: reason})
}

// shortErr drops the path an *os.PathError repeats, keeping the reason.
func shortErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return strings.TrimSpace(err.Error())
}
