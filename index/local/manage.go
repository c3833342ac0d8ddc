package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lore-cli/lore/index"
)

// removingSuffix marks an index folder being removed: renamed aside
// first, so that a removal cut short never leaves a half-deleted index
// under its own name. Index names never start with a dot.
const removingSuffix = ".removing"

// List describes the indexes in parent (config's IndexesDir), by name. A
// missing parent is no error: nothing has been indexed yet.
func List(ctx context.Context, parent string) ([]index.Info, error) {
	names, err := Names(parent)
	if err != nil {
		return nil, err
	}
	out := []index.Info{}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, InfoOf(ctx, filepath.Join(parent, name), name))
	}
	return out, nil
}

// Names lists the indexes in parent, sorted, without opening any: for
// shell completion, which must answer at once.
func Names(parent string) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list indexes: %w", err)
	}
	names := []string{}
	for _, e := range entries { // ReadDir sorts by name
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// InfoOf describes the index in dir. Damage is not an error here: it is
// in Info.Damaged.
func InfoOf(ctx context.Context, dir, name string) index.Info {
	in := index.Info{Name: name, Path: dir, SizeBytes: dirSize(dir)}
	ix, err := Open(dir, name)
	if errors.Is(err, index.ErrNoIndex) {
		return in
	}
	in.Built = true
	var d *index.DamagedError
	if errors.As(err, &d) {
		in.Damaged = d.Reason
		return in
	}
	if err != nil {
		in.Damaged = err.Error()
		return in
	}
	defer ix.Close()
	if in.Chunks, err = ix.Chunks(ctx); err != nil {
		if errors.As(err, &d) {
			in.Damaged = d.Reason
		}
		return in
	}
	in.Embedder, _ = ix.st.meta(ctx, "embedder")
	in.BuiltAt = ix.builtAt(ctx)
	return in
}

// builtAt is when the last build of the index finished, nil if unknown.
func (ix *Index) builtAt(ctx context.Context) *time.Time {
	b, _ := ix.st.meta(ctx, "built_at")
	n, err := strconv.ParseInt(b, 10, 64)
	if err != nil {
		return nil
	}
	t := time.Unix(n, 0)
	return &t
}

// dirSize adds up the sizes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Remove deletes the index in dir and returns what it held. It refuses
// (ErrLocked) while a build writes the index, and holds the index's lock
// from then on, so that no build starts while confirm (when not nil) asks
// whether to go on: an error from confirm keeps the index and is returned.
//
// The folder is first renamed aside, then deleted: an interruption leaves
// a hidden folder (List skips it, the next Remove deletes it), never a
// half-deleted index under its name. Processes that have the index open
// keep reading their open files until they close them.
func Remove(ctx context.Context, dir, name string, confirm func(index.Info) error) (index.Info, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return index.Info{}, fmt.Errorf("%w %q: see `lore index list`", index.ErrNoIndex, name)
	}
	lk, err := acquireLock(dir)
	if errors.Is(err, index.ErrLocked) {
		return index.Info{}, fmt.Errorf("cannot remove index %q: %w", name, err)
	}
	if err != nil {
		return index.Info{}, err
	}
	defer lk.release() // the lock file goes with the folder; this only closes it
	in := InfoOf(ctx, dir, name)
	if confirm != nil {
		if err := confirm(in); err != nil {
			return in, err
		}
	}
	aside := filepath.Join(filepath.Dir(dir), "."+name+"."+strconv.FormatInt(time.Now().UnixNano(), 36)+removingSuffix)
	if err := os.Rename(dir, aside); err != nil {
		return in, fmt.Errorf("remove index %q: %w", name, err)
	}
	if err := os.RemoveAll(aside); err != nil {
		return in, fmt.Errorf("remove index %q: %w (what is left is in %s)", name, err, aside)
	}
	removeLeftovers(filepath.Dir(dir))
	return in, nil
}

// removeLeftovers deletes what removals cut short left behind.
func removeLeftovers(parent string) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), removingSuffix) {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}
