package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/atomicfile"
)

// sourcesFile keeps, beside the generations, what a rebuild needs to start
// over: the folders the index was built from and its embedder. The same
// facts live in index.db, but a damaged index.db must not take them with
// it: `lore index --rebuild` with no paths reads this file.
//
//	indexes/NAME/sources.json  {"sources": ["/abs/docs"], "embedder": "nomic-embed-text"}
const sourcesFile = "sources.json"

// ReadRemembered reads indexes/NAME/sources.json. An index built before
// lore kept that file has none: the error then wraps fs.ErrNotExist.
func ReadRemembered(dir string) (index.Remembered, error) {
	var r index.Remembered
	b, err := os.ReadFile(filepath.Join(dir, sourcesFile))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", sourcesFile, err)
	}
	return r, nil
}

// writeRemembered writes sources.json atomically, and only when it
// changes: a refresh that adds no folder costs no fsync.
func writeRemembered(dir string, r index.Remembered) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if old, err := os.ReadFile(filepath.Join(dir, sourcesFile)); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return atomicfile.Write(filepath.Join(dir, sourcesFile), 0o600, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// rememberedSources are the folders a rebuild with no paths starts from:
// those in sources.json, else (an index from before that file) those in
// generation gen's database.
func rememberedSources(ctx context.Context, dir, gen, name string) ([]string, error) {
	if r, err := ReadRemembered(dir); err == nil && len(r.Sources) > 0 {
		return slices.Clone(r.Sources), nil
	}
	st, err := openStore(filepath.Join(dir, gen, dbFile))
	if err == nil {
		defer st.Close()
		var srcs []index.Source
		if srcs, err = st.sources(ctx); err == nil {
			roots := make([]string, 0, len(srcs))
			for _, s := range srcs {
				roots = append(roots, s.Root)
			}
			return roots, nil
		}
	}
	if isCorrupt(err) {
		return nil, &index.DamagedError{Index: name, Reason: sqliteReason(err) + ", and its folders are recorded nowhere else",
			Fix: "rebuild it naming them: lore index --rebuild PATH...", Err: err}
	}
	return nil, err
}

// dropDamagedNext discards an interrupted rebuild whose database is
// damaged, so that --rebuild starts a new generation rather than resume
// into the damage (and tell the user to rebuild, forever).
func dropDamagedNext(ctx context.Context, dir, name string, notice func(string)) {
	next := readPointer(dir, nextFile)
	if next == "" {
		return
	}
	st, err := openStore(filepath.Join(dir, next, dbFile))
	if err == nil {
		err = quickCheck(ctx, st.db, name)
		st.Close()
	}
	if isCorrupt(err) || errors.Is(err, index.ErrCorrupt) {
		os.Remove(filepath.Join(dir, nextFile))
		removeStaleGenerations(dir)
		notice("the interrupted rebuild was damaged: starting it over")
	}
}
