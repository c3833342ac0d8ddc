package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/excerpt"
)

// checkIndex opens the index and reports what it holds, SQLite's
// quick_check, the vector graph and the files changed since it was built.
// It also returns the embedding model the index's queries need ("" when
// it needs none), which the Ollama checks look for.
func checkIndex(ctx context.Context, open func() (Index, error), cfg config.Config, ago func(time.Time) string) ([]Check, string) {
	embedModel := ""
	if cfg.Embedder == "ollama" {
		embedModel = cfg.EmbedModel // what the first build will embed with
	}
	ix, err := open()
	var damaged *index.DamagedError
	switch {
	case errors.Is(err, index.ErrNoIndex):
		return []Check{{Name: "index", Status: Fail, Detail: fmt.Sprintf("no index %q in %s", cfg.Index, cfg.IndexDir()),
			Fix: "build it: lore index PATH (the folders of documents to search)"}}, embedModel
	case errors.As(err, &damaged):
		return []Check{{Name: "index", Status: Fail, Detail: fmt.Sprintf("%q cannot be opened: %s", cfg.Index, damaged.Reason), Fix: "rebuild it: lore index --rebuild"}}, embedModel
	case err != nil:
		return []Check{{Name: "index", Status: Fail, Detail: excerpt.FirstLine(err.Error()), Fix: "check the folder's permissions: " + cfg.IndexDir()}}, embedModel
	}
	defer ix.Close()
	st, err := ix.Status(ctx)
	if err != nil {
		return []Check{{Name: "index", Status: Fail, Detail: excerpt.FirstLine(err.Error()), Fix: "rebuild it: lore index --rebuild"}}, embedModel
	}
	if st.Damaged != "" {
		fix := "rebuild it: lore index --rebuild"
		if len(st.Sources) == 0 {
			fix = "rebuild it naming its folders: lore index --rebuild PATH..."
		}
		return []Check{
			{Name: "index", Status: OK, Detail: fmt.Sprintf("%q at %s", st.Index, st.Path)},
			{Name: "quick_check", Status: Fail, Detail: strings.TrimPrefix(st.Damaged, "quick_check: "), Fix: fix},
		}, embedModel
	}
	checks := []Check{{Name: "index", Status: OK, Detail: fmt.Sprintf("%q: %s, %s", st.Index, plural(st.Documents, "document"), plural(st.Chunks, "chunk"))}}
	if st.Embedder == "none" || st.Embedder == "" {
		embedModel = ""
		checks = append(checks, Check{Name: "embedder", Status: OK, Detail: "none (keyword search only)"})
	} else {
		embedModel = st.Embedder
		checks = append(checks, Check{Name: "embedder", Status: OK, Detail: fmt.Sprintf("%s, %d dimensions, %s", st.Embedder, st.Dimension, plural(st.Vectors, "vector"))})
	}
	if st.BuiltAt != nil {
		checks = append(checks, Check{Name: "last build", Status: OK, Detail: ago(*st.BuiltAt)})
	} else {
		checks = append(checks, Check{Name: "last build", Status: Warn, Detail: "never finished", Fix: "finish it: lore index"})
	}
	checks = append(checks, Check{Name: "quick_check", Status: OK, Detail: "ok"})
	checks = append(checks, graphCheck(ctx, ix))
	checks = append(checks, changedCheck(st))
	return checks, embedModel
}

func graphCheck(ctx context.Context, ix Index) Check {
	gs, err := ix.CheckGraph(ctx)
	switch {
	case err != nil:
		return Check{Name: "graph", Status: Fail, Detail: excerpt.FirstLine(err.Error()), Fix: "rebuild it: lore index --rebuild"}
	case !gs.Needed:
		return Check{Name: "graph", Status: Skip, Detail: "no vectors, no graph"}
	case gs.Problem != "":
		// Searches rebuild it in memory from index.db, on every start.
		return Check{Name: "graph", Status: Fail, Detail: gs.Problem + "; searches rebuild it in memory on each start",
			Fix: "save a good one: lore index"}
	}
	if gs.Lag > 0 {
		// Live sync leaves the file behind by a bounded share on purpose.
		return Check{Name: "graph", Status: OK, Detail: fmt.Sprintf("%s, checksums ok, %s behind the index since live sync last saved it (searches add them; saved again once they add up)",
			plural(gs.Nodes, "node"), plural(gs.Lag, "vector"))}
	}
	return Check{Name: "graph", Status: OK, Detail: fmt.Sprintf("%s, checksums ok, in step with the index", plural(gs.Nodes, "node"))}
}

func changedCheck(st index.Status) Check {
	c := Check{Name: "files", Status: OK, Detail: fmt.Sprintf("up to date with %s", plural(len(st.Sources), "source"))}
	if len(st.Changed) > 0 {
		kinds := map[string]int{}
		for _, ch := range st.Changed {
			kinds[ch.Change]++
		}
		var parts []string
		for _, k := range []string{"modified", "new", "deleted"} {
			if kinds[k] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
			}
		}
		c.Status = Warn
		c.Detail = fmt.Sprintf("%s changed since indexing (%s)", plural(len(st.Changed), "file"), strings.Join(parts, ", "))
		c.Fix = "refresh it: lore index (lore index status lists them)"
	}
	if len(st.Skipped) > 0 {
		c.Detail += fmt.Sprintf("; %d skipped (lore index status says why)", len(st.Skipped))
	}
	return c
}
