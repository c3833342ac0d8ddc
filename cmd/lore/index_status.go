package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/wire"
)

func newIndexStatusCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	var asJSON, check bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what an index holds and which files changed since",
		Long: `Show what an index holds (documents, chunks, embedder, skipped files) and
which files changed on disk since they were indexed.

Status reads the index's numbers, not every page of it: --check also runs
SQLite's full integrity check (PRAGMA quick_check), which reads the whole
index (seconds on a large one; lore doctor runs it too). A damaged index
exits 5.`,
		Example: `  lore index status
  lore index status --check              # also the full integrity check
  lore index status --json | jq '.changed | length'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			noteFolderNamed(cmd, streams)
			eng, err := indexEngine(cfg)
			if err != nil {
				return err
			}
			defer eng.Close()
			status := eng.QuickIndexStatus
			if check {
				status = eng.IndexStatus
			}
			st, err := status(cmd.Context(), cfg.Index)
			if err != nil {
				return err
			}
			// Freshness is read from the watcher's files: a store that
			// cannot say leaves sync out rather than failing the status.
			var sync *wire.Sync
			if f, err := eng.Freshness(cmd.Context(), cfg.Index); err == nil {
				sync = wire.NewSync(f)
			}
			if asJSON {
				out := wire.NewIndexStatus(st)
				out.Sync = sync
				if err := writeJSON(streams.Out, out); err != nil {
					return err
				}
			} else {
				printStatus(streams.Out, st, sync, time.Now())
			}
			if st.Damaged != "" {
				return exitCode(exitDamaged) // said on stdout
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	cmd.Flags().BoolVar(&check, "check", false, "also run the full integrity check (reads the whole index)")
	return cmd
}

func printStatus(w io.Writer, s index.Status, sync *wire.Sync, now time.Time) {
	// Paths are file names: whatever bytes they hold, none reaches the
	// terminal as a control.
	fmt.Fprintf(w, "index      %s (%s)\n", s.Index, termsafe.Line(s.Path))
	for i, src := range s.Sources {
		label := ""
		if i == 0 {
			label = "sources"
		}
		fmt.Fprintf(w, "%-10s %s\n", label, termsafe.Line(src))
	}
	if s.Damaged != "" {
		fix := "rebuild it: lore index --rebuild"
		if len(s.Sources) == 0 {
			fix = "rebuild it naming its folders: lore index --rebuild PATH..."
		}
		fmt.Fprintf(w, "damaged    %s; %s\n", termsafe.Line(s.Damaged), fix)
		return
	}
	fmt.Fprintf(w, "documents  %d%s\n", s.Documents, byKind(s.DocumentsByKind))
	fmt.Fprintf(w, "chunks     %d (%d prose, %d code, %d table)\n", s.Chunks, s.ChunksByKind[ingest.KindProse], s.ChunksByKind[ingest.KindCode], s.ChunksByKind[ingest.KindTable])
	if s.Embedder == "none" {
		fmt.Fprintf(w, "embedder   none (lexical search only)\n")
	} else {
		fmt.Fprintf(w, "embedder   %s, %d dimensions, %d vectors\n", s.Embedder, s.Dimension, s.Vectors)
	}
	fmt.Fprintf(w, "size       %s\n", units.Bytes(s.SizeBytes))
	if s.BuiltAt != nil {
		fmt.Fprintf(w, "built      %s (%s ago)\n", s.BuiltAt.Format(time.DateTime), time.Since(*s.BuiltAt).Round(time.Second))
	}
	if sync != nil {
		fmt.Fprintf(w, "sync       %s\n", syncLine(sync, now))
	}
	if len(s.Skipped) > 0 {
		fmt.Fprintf(w, "skipped    %s:\n", units.Plural(len(s.Skipped), "file"))
		for _, f := range s.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", termsafe.Line(f.Path), termsafe.Line(f.Reason))
		}
	}
	if len(s.Changed) == 0 {
		fmt.Fprintln(w, "up to date with the files on disk")
		return
	}
	fmt.Fprintf(w, "changed on disk since indexed (%d; run `lore index` to refresh):\n", len(s.Changed))
	for _, c := range s.Changed {
		fmt.Fprintf(w, "  %-8s %s\n", c.Change, termsafe.Line(c.Path))
	}
}

// syncLine says who keeps the index in step with its files and how far:
// "watched by host pid 123, synced 3s ago". The watcher's name and error
// come from a file any process may write: sanitised.
func syncLine(s *wire.Sync, now time.Time) string {
	if !s.Watching {
		return "not watched (run lore index --watch, or keep lore, lore serve or lore mcp open)"
	}
	line := "watched by " + termsafe.Line(cmp.Or(s.Watcher, "another lore"))
	switch {
	case s.State == index.WatchIndexing || s.Pending > 0:
		line += ", indexing " + units.Plural(s.Pending, "file")
	case s.SyncedAt != nil:
		line += ", synced " + ago(now.Sub(*s.SyncedAt))
	default:
		line += ", not synced yet"
	}
	if s.VectorsPending > 0 {
		line += fmt.Sprintf("; %s wait for vectors", units.Plural(s.VectorsPending, "chunk"))
	}
	if s.Polling != "" {
		line += "; polling (" + termsafe.Line(s.Polling) + ")"
	}
	if s.Error != "" {
		line += "; last batch failed: " + termsafe.Line(s.Error)
	}
	return line
}

// byKind lists how many files went through each chunker, most first:
// " (markdown 120, code 30, structured 4)".
func byKind(n map[string]int) string {
	kinds := slices.Collect(maps.Keys(n))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Or(n[b]-n[a], strings.Compare(a, b)) })
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if k == "" {
			continue // indexed by an older lore under a type this one leaves out
		}
		parts = append(parts, fmt.Sprintf("%s %d", k, n[k]))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
