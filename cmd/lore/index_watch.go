package main

import (
	"context"
	"fmt"
	"time"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/wire"
)

// runWatch is `lore index --watch`: a build first when paths or
// --rebuild ask for one, then the watcher until Ctrl+C or SIGTERM, which
// exit 130 with every batch applied so far kept.
func runWatch(ctx context.Context, eng *app.Engine, opts *indexOptions, streams *ioStreams) error {
	var bar *progressBar
	if !opts.quiet && !opts.json {
		bar = newProgressBar(streams.Err, streams.ErrTTY, streams.ErrWidth)
	}
	if len(opts.paths) > 0 || opts.rebuild {
		req := app.BuildRequest{Paths: opts.paths, Rebuild: opts.rebuild, ChooseEmbedder: opts.chooseEmbedder, Told: opts.told}
		if bar != nil {
			req.Progress, req.Notice = bar.update, bar.notice
		}
		sum, err := eng.Build(ctx, req)
		bar.finish()
		if err != nil {
			return err
		}
		if bar != nil {
			printSummary(streams.Err, sum)
		}
		bar = nil // the watcher's refresh finds nothing left to do
	}
	req := app.WatchRequest{OnEvent: func(ev app.WatchEvent) { printWatchEvent(streams, opts, ev) }}
	if bar != nil {
		req.Progress = bar.update
	}
	err := eng.Watch(ctx, req)
	bar.finish()
	if err == nil {
		err = ctx.Err() // the watcher ends only with its context
	}
	return err
}

// printWatchEvent prints one event: a line on stdout per batch, NDJSON
// with --json; notices and failures go to stderr as lines.
func printWatchEvent(streams *ioStreams, opts *indexOptions, ev app.WatchEvent) {
	s := ev.Summary
	files := s.FilesIndexed + s.FilesRemoved
	if opts.json {
		w := wire.WatchEvent{Event: ev.Kind, Index: ev.Index, Time: time.Now().UTC(), Files: files, Removed: s.FilesRemoved,
			ChunksAdded: s.Chunks, ChunksRemoved: ev.ChunksRemoved, Embedded: s.ChunksEmbedded, VectorsPending: ev.Freshness.VectorsPending,
			Millis: ev.Took.Milliseconds(), Message: ev.Notice, Polling: ev.Freshness.Polling}
		if ev.Kind == app.WatchSynced {
			w.Paths, w.Deleted = wire.FilePaths(s.Updated), wire.FilePaths(s.Deleted)
		}
		if ev.Err != nil {
			w.Error = ev.Err.Error()
		}
		writeNDJSON(streams.Out, w)
		return
	}
	now := time.Now().Format("15:04:05")
	switch ev.Kind {
	case app.WatchStarted:
		if !opts.quiet {
			line := fmt.Sprintf("%s watching index %q: %s, %s", now, ev.Index, units.Plural(s.TotalFiles, "file"), units.Plural(s.TotalChunks, "chunk"))
			if s.FilesIndexed+s.FilesRemoved > 0 {
				line += fmt.Sprintf(" (%s refreshed, %d removed)", units.Plural(s.FilesIndexed, "file"), s.FilesRemoved)
			}
			fmt.Fprintln(streams.Out, termsafe.Line(line)+"; Ctrl+C stops")
		}
	case app.WatchSynced:
		if opts.quiet {
			return
		}
		line := fmt.Sprintf("%s synced %s: +%d −%d chunks, %d embedded", now, units.Plural(files, "file"), s.Chunks, ev.ChunksRemoved, s.ChunksEmbedded)
		if ev.Freshness.VectorsPending > 0 {
			line += fmt.Sprintf(", %d vectors pending", ev.Freshness.VectorsPending)
		}
		fmt.Fprintf(streams.Out, "%s (%d ms)\n", termsafe.Line(line), ev.Took.Milliseconds())
	case app.WatchFailed:
		fmt.Fprintf(streams.Err, "%s lore: %s (tried again shortly)\n", now, termsafe.Line(ev.Err.Error()))
	case app.WatchNotice:
		if !opts.quiet {
			fmt.Fprintf(streams.Err, "%s %s\n", now, termsafe.Line(ev.Notice))
		}
	}
}
