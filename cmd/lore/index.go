package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/wire"
)

type indexOptions struct {
	paths          []string
	rebuild        bool
	chooseEmbedder bool     // --embedder or --embed-model given
	told           []string // app.RememberedKeys given as flags
	quiet          bool
	json           bool
	watch          bool
}

func newIndexCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &indexOptions{}
	cmd := &cobra.Command{
		Use:   "index [PATH...]",
		Short: "Build or refresh an index of folders of documents",
		Long: `Index folders (or single files) of markdown, text, HTML, source code and PDF.

Folders are remembered: run "lore index" with no paths to refresh all of them.
Only changed files are read again, and only new chunks are embedded. .gitignore
and .loreignore files are honoured. An interrupted run keeps what it finished.

Every run first checks the index's pages (SQLite's quick_check of each table);
lore index status --check and lore doctor run the full check. A damaged index exits
5 with the fix: "lore index --rebuild", which rebuilds it from the remembered
folders with the embedder it was built with.

--watch refreshes, then keeps the index in step with its folders until
Ctrl+C (exit 130, everything applied kept): one line per batch of changes,
or one JSON event a line with --json. Only the chunks that changed are
embedded; with Ollama down, changes are searchable by keyword at once and
their vectors follow when it answers. The chat, lore serve and lore mcp
do the same by themselves (config watch).

lore index list, lore index rm NAME and lore index status manage indexes; a
folder with one of those names is indexed as ./list, ./rm or ./status.`,
		Example: `  lore index ./docs ~/notes              # index two folders
  lore index                             # refresh what was indexed before
  lore index --embedder none ./docs      # keyword search only: no Ollama needed
  lore index --rebuild                   # start over, with the index's embedder
  lore index --watch                     # refresh, then keep in step as files are saved
  lore index --rebuild --embed-model M   # start over, embedding with model M
  lore index --json ./docs | jq .chunks  # a summary for scripts
  lore index list                        # every index: chunks, size, embedder, built
  lore index rm scratch                  # remove an index (asks first)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			opts.paths = args
			opts.chooseEmbedder = cmd.Flags().Changed("embedder") || cmd.Flags().Changed("embed-model")
			for _, k := range app.RememberedKeys {
				if cmd.Flags().Changed(k) {
					opts.told = append(opts.told, k)
				}
			}
			return runIndex(cmd.Context(), cfg, opts, streams)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.rebuild, "rebuild", false, "build the index again from scratch")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "print nothing but errors")
	f.BoolVar(&opts.json, "json", false, "print a JSON summary on stdout (with --watch: one JSON event a line)")
	f.BoolVar(&opts.watch, "watch", false, "refresh, then keep the index in step with its files until interrupted")
	f.String("embedder", "ollama", "ollama, or none for a lexical-only index")
	f.String("embed-model", "nomic-embed-text", "Ollama embedding model")
	f.Int("embed-batch-size", 32, "chunks per embedding request")
	f.String("max-file-size", "4MiB", "skip files larger than this (bytes, or e.g. 10MB, 10M, 8MiB)")
	f.Bool("follow-symlinks", false, "follow symbolic links that lead outside a source (off: skipped with a reason)")
	f.Int("chunk-size", 1500, "chunk budget in bytes")
	f.Int("chunk-overlap", 200, "bytes of prose repeated when a section is split")
	cmd.AddCommand(newIndexStatusCmd(g, streams), newIndexListCmd(g, streams), newIndexRmCmd(g, streams))
	return cmd
}

func runIndex(ctx context.Context, cfg config.Config, opts *indexOptions, streams *ioStreams) error {
	eng, err := app.Open(app.Options{Config: cfg, NoRerank: true, Dial: dialer()})
	if err != nil {
		return err
	}
	defer eng.Close()
	if opts.watch {
		return runWatch(ctx, eng, opts, streams)
	}
	var bar *progressBar
	req := app.BuildRequest{Paths: opts.paths, Rebuild: opts.rebuild, ChooseEmbedder: opts.chooseEmbedder, Told: opts.told}
	if !opts.quiet {
		bar = newProgressBar(streams.Err, streams.ErrTTY, streams.ErrWidth)
		req.Progress, req.Notice = bar.update, bar.notice
	}
	sum, err := eng.Build(ctx, req)
	bar.finish()
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(streams.Out, wire.NewIndexSummary(sum))
	}
	if !opts.quiet {
		printSummary(streams.Err, sum)
	}
	return nil
}

func printSummary(w io.Writer, s index.Summary) {
	fmt.Fprintf(w, "index %q: %s indexed, %d unchanged, %d removed, %d skipped; %s written, %d embedded (%.1fs)\n",
		s.Index, units.Plural(s.FilesIndexed, "file"), s.FilesUnchanged, s.FilesRemoved, len(s.FilesSkipped), units.Plural(s.Chunks, "chunk"), s.ChunksEmbedded, s.Seconds)
	if len(s.FilesSkipped) > 0 {
		byReason := map[string]int{}
		var order []string
		for _, f := range s.FilesSkipped {
			r, _, _ := strings.Cut(f.Reason, ":")
			if byReason[r] == 0 {
				order = append(order, r)
			}
			byReason[r]++
		}
		parts := make([]string, len(order))
		for i, r := range order {
			parts[i] = fmt.Sprintf("%d %s", byReason[r], r)
		}
		fmt.Fprintf(w, "skipped: %s (details: lore index status)\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "now holds %s, %s", units.Plural(s.TotalFiles, "file"), units.Plural(s.TotalChunks, "chunk"))
	if s.Embedder == "none" {
		fmt.Fprint(w, " (lexical only: no embeddings)")
	}
	fmt.Fprintln(w)
}

// progressBar draws build progress on stderr: one redrawn line on a
// terminal, a plain line every few seconds otherwise. A nil bar draws nothing.
type progressBar struct {
	w     io.Writer
	tty   bool
	width func() int
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer, tty bool, width func() int) *progressBar {
	return &progressBar{w: w, tty: tty, width: width}
}

func (b *progressBar) update(p index.Progress) {
	if b == nil {
		return
	}
	now := time.Now()
	every := 100 * time.Millisecond
	if !b.tty {
		every = 5 * time.Second
	}
	if now.Sub(b.last) < every && p.Phase != "done" {
		return
	}
	if !b.tty && b.last.IsZero() {
		b.last = now // no line for the first instant of a plain log
		return
	}
	b.last = now
	line := progressLine(p, now, b.tty, b.width())
	if line == "" {
		return
	}
	if b.tty {
		fmt.Fprintf(b.w, "\r\x1b[2K%s", line)
		b.drawn = true
	} else {
		fmt.Fprintln(b.w, line)
	}
}

// notice prints a warning on a line of its own, above the bar.
func (b *progressBar) notice(msg string) {
	if b == nil {
		return
	}
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[2K")
		b.drawn = false
	}
	fmt.Fprintf(b.w, "warning: %s\n", termsafe.Text(msg)) // it may name a file
}

func (b *progressBar) finish() {
	if b != nil && b.drawn {
		fmt.Fprint(b.w, "\r\x1b[2K")
		b.drawn = false
	}
}

// progressLine is the progress as one line. On a terminal it fits width
// (a wrapped line would not be erased by the next one, so each update
// would add lines): the rate, then the words, then the chunk count give
// way, and the bar is drawn only where there is room for it.
func progressLine(p index.Progress, now time.Time, tty bool, width int) string {
	elapsed := now.Sub(p.Started)
	var line string
	switch p.Phase {
	case "scan":
		line = "scanning files…"
	case "graph":
		// The phase starts before its total is known (a store reports
		// 0/0 then): no count rather than "0/0".
		line = "updating vector graph…"
		if p.GraphTotal > 0 {
			line = fmt.Sprintf("updating vector graph %d/%d", p.GraphDone, p.GraphTotal)
		}
	case "index":
	default:
		return ""
	}
	if line != "" {
		if tty {
			return ansi.Truncate(line, width-1, "…")
		}
		return line
	}
	files := fmt.Sprintf("%d/%d files", p.FilesDone, p.FilesTotal)
	chunks := fmt.Sprintf("%d chunks", p.Chunks)
	embedded := fmt.Sprintf("%d embedded", p.ChunksEmbedded)
	rate, eta := "", ""
	if s := elapsed.Seconds(); s > 0.5 && p.ChunksEmbedded > 0 {
		rate = fmt.Sprintf("%.0f emb/s", float64(p.ChunksEmbedded)/s)
	}
	if p.Done > 0 && p.Done < 1 {
		left := time.Duration(float64(elapsed) * (1 - p.Done) / p.Done)
		eta = "ETA " + left.Round(time.Second).String()
	}
	join := func(sep string, parts ...string) string {
		return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), sep)
	}
	stats := join("  ", files, chunks, embedded, rate, eta)
	if !tty {
		return "indexing: " + stats
	}
	for _, shorter := range []string{
		join("  ", files, chunks, embedded, eta),
		join(" ", files, chunks, fmt.Sprintf("%d emb", p.ChunksEmbedded), eta),
		join(" ", files, eta),
	} {
		if ansi.StringWidth(stats) < width {
			break
		}
		stats = shorter
	}
	stats = ansi.Truncate(stats, width-1, "…")
	barWidth := min(30, width-ansi.StringWidth(stats)-4)
	if barWidth < 5 {
		return stats
	}
	filled := int(float64(barWidth) * min(max(p.Done, 0), 1))
	return "[" + strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled) + "] " + stats
}
