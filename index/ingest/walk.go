package ingest

import (
	"context"
	"errors"
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
	// Cut says why the walk stopped before the end of the root ("" when
	// it saw everything): the files it did not reach are not gone, so a
	// build must not remove them from the index.
	Cut string
}

// The walk's bounds when WalkOptions leaves them zero. A source this large
// is most likely a link or a path that leads somewhere unintended (a home
// folder, /); each file costs a few hundred bytes held in memory.
const (
	DefaultMaxFiles = 500_000
	DefaultMaxDepth = 64
)

// WalkOptions say how far a walk may go.
type WalkOptions struct {
	// FollowSymlinks follows symbolic links whose target lies outside the
	// source. Off, such a link is skipped with ReasonLinkOutside: a cloned
	// repository's `notes.md -> ~/.aws/credentials` must not put the
	// credentials into a searchable index. Links that stay inside the
	// source are always followed.
	FollowSymlinks bool
	// MaxFiles bounds the entries (files and skipped ones) of one source;
	// MaxDepth the folders below its root. Zero takes the default.
	MaxFiles int
	MaxDepth int
	// Only scopes the walk to these absolute paths (files or folders,
	// present or not): a root holds only the entries at or below one of
	// them, and a root none of them lies in is not walked at all. The
	// folders on the way down are read for their ignore files and links
	// as a whole walk reads them, so a scoped walk keeps exactly the
	// entries a whole one would keep in its scope. nil walks everything.
	Only []string
	// OnDir, when set, is called with each folder the walk enters (the
	// root included): a watcher watches exactly those.
	OnDir func(abs string)
}

// Scope lists the paths of only (absolute) that lie at or below root, as
// slash-separated paths relative to it ("" for root itself). A root that
// is a file is in scope when only names it or a folder above it.
func Scope(root string, only []string) []string {
	var out []string
	for _, o := range only {
		rel, err := filepath.Rel(root, o)
		if err != nil {
			continue
		}
		if rel == "." {
			return []string{""}
		}
		if filepath.IsLocal(rel) {
			out = append(out, filepath.ToSlash(rel))
			continue
		}
		if up, err := filepath.Rel(o, root); err == nil && filepath.IsLocal(up) {
			return []string{""} // o is a folder that holds root
		}
	}
	return out
}

// InScope tells whether rel (relative to a root) is at or below one of
// scope's paths; a nil scope holds everything.
func InScope(scope []string, rel string) bool {
	if scope == nil {
		return true
	}
	for _, s := range scope {
		if s == "" || rel == s || strings.HasPrefix(rel, s+"/") {
			return true
		}
	}
	return false
}

// onWayTo tells whether the folder rel lies above one of scope's paths.
func onWayTo(scope []string, rel string) bool {
	for _, s := range scope {
		if strings.HasPrefix(s, rel+"/") {
			return true
		}
	}
	return false
}

// Skip reasons of the walk.
const (
	ReasonLinkOutside = "symlink outside the source"
	ReasonLinkLoop    = "symlink loop"
	ReasonTooDeep     = "too deep"
)

// WalkRoots walks every root (a folder or a file) and keeps each file
// once, whatever path reached it: a file under two roots (a folder and a
// folder inside it) or reached twice through symbolic or hard links
// belongs to the root listed first and to the first path the walk met.
// It returns ctx's error, and no entries, once ctx is done: a walk into a
// huge tree ends at once on Ctrl+C.
func WalkRoots(ctx context.Context, roots []string, opt WalkOptions) ([]Walked, error) {
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = DefaultMaxFiles
	}
	if opt.MaxDepth <= 0 {
		opt.MaxDepth = DefaultMaxDepth
	}
	out := make([]Walked, len(roots))
	claimed := map[fileID]bool{}
	for i, root := range roots {
		var scope []string
		if opt.Only != nil {
			if scope = Scope(root, opt.Only); scope == nil {
				continue // nothing of this root changed
			}
			if scope[0] == "" {
				scope = nil
			}
		}
		entries, cut, err := walkSource(ctx, root, opt, scope)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
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
		out[i] = Walked{kept, err, cut}
	}
	return out, nil
}

// walkSource lists the files under root, honouring .gitignore and
// .loreignore files at every level, following symbolic links that stay
// inside the root (and those that leave it only with FollowSymlinks), and
// recording anything unreadable instead of stopping. A folder is walked
// once, whatever path reached it; a link back into a folder on the path
// is a loop and is skipped.
func walkSource(ctx context.Context, root string, opt WalkOptions, scope []string) ([]Entry, string, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", root, err)
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return []Entry{{Rel: filepath.Base(root), Abs: root, Reason: notRegular(fi.Mode())}}, "", nil
		}
		id, _ := idOf(fi)
		return []Entry{{Rel: filepath.Base(root), Abs: root, Size: fi.Size(), MTime: fi.ModTime(), id: id}}, "", nil
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", root, err)
	}
	w := &walker{ctx: ctx, root: root, real: filepath.Clean(real), opt: opt, scope: scope, onPath: map[fileID]bool{}, walked: map[fileID]bool{}}
	w.dir(root, "", 0, nil)
	return w.out, w.cut, nil
}

type fileID struct{ dev, ino uint64 }

type walker struct {
	ctx    context.Context
	root   string
	real   string // root with its links resolved
	opt    WalkOptions
	scope  []string // relative paths to keep (nil: all)
	out    []Entry
	cut    string
	onPath map[fileID]bool // the folders from the root down to here
	walked map[fileID]bool // every folder entered
}

func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

// stopped tells whether the walk must end: ctx is done, or the source
// holds more entries than the walk may keep.
func (w *walker) stopped() bool {
	if w.cut != "" {
		return true
	}
	if w.ctx.Err() != nil {
		w.cut = "interrupted"
		return true
	}
	if len(w.out) >= w.opt.MaxFiles {
		w.cut = fmt.Sprintf("more than %d files: index a smaller folder, or leave some out in a .loreignore file", w.opt.MaxFiles)
		return true
	}
	return false
}

// outside tells whether the link at abs leads out of the source, and
// where it leads.
func (w *walker) outside(abs string) (string, bool) {
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", false // os.Stat said it resolves; a race is caught by the reads
	}
	rel, err := filepath.Rel(w.real, target)
	return target, err != nil || (!filepath.IsLocal(rel) && rel != ".")
}

func (w *walker) dir(abs, rel string, depth int, rules []ignoreRule) {
	if w.stopped() {
		return
	}
	if depth > w.opt.MaxDepth {
		w.skip(rel, abs, fmt.Sprintf("%s: more than %d folders below the source", ReasonTooDeep, w.opt.MaxDepth))
		return
	}
	fi, err := os.Stat(abs)
	if err != nil {
		w.skip(rel, abs, "unreadable: "+ShortErr(err))
		return
	}
	if id, ok := idOf(fi); ok {
		if w.onPath[id] {
			w.skip(rel, abs, ReasonLinkLoop)
			return
		}
		if w.walked[id] {
			return // reached before through another link: its files are listed
		}
		w.onPath[id], w.walked[id] = true, true
		defer delete(w.onPath, id)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		w.skip(rel, abs, "unreadable directory: "+ShortErr(err))
		return
	}
	if w.opt.OnDir != nil {
		w.opt.OnDir(abs)
	}
	rules = append(rules[:len(rules):len(rules)], readIgnoreFile(filepath.Join(abs, ".gitignore"), rel)...)
	rules = append(rules, readIgnoreFile(filepath.Join(abs, ".loreignore"), rel)...)
	for _, e := range entries {
		if w.stopped() {
			return
		}
		name := e.Name()
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		inScope := InScope(w.scope, childRel)
		if !inScope && !(e.IsDir() || e.Type()&os.ModeSymlink != 0) {
			continue
		}
		childAbs := filepath.Join(abs, name)
		isDir := e.IsDir()
		var info os.FileInfo
		link := e.Type()&os.ModeSymlink != 0
		if link {
			info, err = os.Stat(childAbs)
			if errors.Is(err, syscall.ELOOP) {
				// a.md → b.md → a.md: links that lead to each other
				// never reach a file.
				w.skip(childRel, childAbs, "symlink loop")
				continue
			}
			if err != nil {
				w.skip(childRel, childAbs, "broken symlink")
				continue
			}
			isDir = info.IsDir()
		}
		if isDir && vcsDirs[name] {
			continue
		}
		if !inScope && !(isDir && onWayTo(w.scope, childRel)) {
			continue
		}
		if ignored(rules, childRel, isDir) {
			continue
		}
		if link && !w.opt.FollowSymlinks {
			if target, out := w.outside(childAbs); out {
				if said, err := os.Readlink(childAbs); err == nil && filepath.IsAbs(said) {
					target = said // /proc/self, not the pid of this walk
				}
				w.skip(childRel, childAbs, fmt.Sprintf("%s: it leads to %s (set follow-symlinks to index it)", ReasonLinkOutside, target))
				continue
			}
		}
		if isDir {
			w.dir(childAbs, childRel, depth+1, rules)
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
