package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/internal/ollama"
)

// BuildRequest is one `lore index` run.
type BuildRequest struct {
	// Index names the index to build ("": the configured one).
	Index   string
	Paths   []string // folders or files; none refreshes the remembered ones
	Rebuild bool
	// ChooseEmbedder is set when the user named the embedder for this run
	// (--embedder, --embed-model). Otherwise an existing index keeps the
	// embedder it was built with, whatever the configuration says.
	ChooseEmbedder bool
	// Told are the settings of RememberedKeys the user set for this run
	// (flags); the others come from what the index remembers, else the
	// configuration.
	Told []string
	// Only, DeferVectors, FillVectors and KeepEmptied are a sync batch's
	// (see index.BuildOptions).
	Only                      []string
	DeferVectors, FillVectors bool
	KeepEmptied               bool
	// Progress and Notice, when set, are called from the build's goroutine.
	Progress func(index.Progress)
	Notice   func(string)
}

// builtWith is the embedder the existing index was built with ("none" for
// keyword-only), or "" when there is no index yet.
func (e *Engine) builtWith(ctx context.Context, name string) string {
	o, err := e.acquire(ctx, name)
	if err != nil {
		return ""
	}
	defer e.release(o)
	return o.ix.EmbedderModel(ctx)
}

// damagedBuiltWith is the embedder a damaged index was built with, as its
// sources.json remembers it; "" when the index is healthy or that is not
// known.
func (e *Engine) damagedBuiltWith(ctx context.Context, name string) string {
	o, err := e.acquire(ctx, name)
	if err == nil {
		err = o.ix.Check(ctx)
		e.release(o)
	}
	if !errors.Is(err, index.ErrCorrupt) {
		return ""
	}
	r, err := e.store.Remembered(ctx, name)
	if err != nil {
		return ""
	}
	return r.Embedder
}

// Build builds or refreshes the index req names: with the embedder it was
// built with, or the configured one for a new index or when
// req.ChooseEmbedder. Searches and turns running meanwhile keep working, and see the
// result as soon as it is committed.
func (e *Engine) Build(ctx context.Context, req BuildRequest) (index.Summary, error) {
	name, err := resolveIndex(e.cfg, req.Index)
	if err != nil {
		return index.Summary{}, err
	}
	cfg := e.cfg
	cfg.Index = name
	remember, kept, err := e.rememberedSettings(ctx, &cfg, req.Told)
	if err != nil {
		return index.Summary{}, err
	}
	model := cfg.EmbedModel
	if cfg.Embedder == "none" {
		model = "none"
	}
	notices := kept
	if !req.ChooseEmbedder {
		// An index keeps the embedder it was built with, a rebuild too:
		// only --embedder or --embed-model switch it. (A rebuild that took
		// the configured one needed Ollama to rebuild a keyword-only index.)
		built, damaged := e.builtWith(ctx, name), false
		if built == "" {
			built, damaged = e.damagedBuiltWith(ctx, name), true
		}
		if built != "" && built != model && req.Rebuild {
			what := "the index"
			if damaged {
				what = "the damaged index"
			}
			notices = append(notices, fmt.Sprintf("rebuilding %s with the embedder it was built with: %s (--embedder or --embed-model choose another)", what, built))
		}
		if built != "" {
			model = built
		}
	}
	var emb index.Embedder
	if model != "none" {
		emb = ollama.NewEmbedder(e.client, e.hostLabel(), model)
	}
	bo := index.BuildOptions{
		Name:           cfg.Index,
		Paths:          req.Paths,
		Rebuild:        req.Rebuild,
		Embedder:       emb,
		EmbedBatchSize: cfg.EmbedBatchSize,
		Chunk:          ingest.ChunkOptions{Size: cfg.ChunkSize, Overlap: cfg.ChunkOverlap},
		MaxFileSize:    cfg.MaxFileSize,
		Walk:           ingest.WalkOptions{FollowSymlinks: cfg.FollowSymlinks},
		Remember:       remember,
		Only:           req.Only,
		DeferVectors:   req.DeferVectors,
		FillVectors:    req.FillVectors,
		KeepEmptied:    req.KeepEmptied,
		Progress:       req.Progress,
		Notice: func(msg string) {
			slog.Warn(msg)
			if req.Notice != nil {
				req.Notice(msg)
			}
		},
	}
	for _, n := range notices {
		bo.Notice(n)
	}
	if req.Only == nil {
		slog.Info("index", "name", cfg.Index, "paths", req.Paths, "rebuild", req.Rebuild, "embedder", model)
	}
	return e.store.Build(ctx, bo)
}

// RememberedKeys are the settings that shape an index. Those the user
// gives a build (flags) are remembered with it (index.Remembered.Settings)
// and used by the next builds unless given again, so that a plain `lore
// index` after `lore index --max-file-size 10MiB docs` does not drop the
// large files it was told to keep. follow-symlinks is remembered however
// it was set: it says what the index may hold, and index status walks by it.
var RememberedKeys = []string{"max-file-size", "chunk-size", "chunk-overlap", "follow-symlinks"}

// setting is cfg's value of one of RememberedKeys, as text config.Set reads.
func setting(cfg config.Config, key string) string {
	switch key {
	case "max-file-size":
		return strconv.FormatInt(cfg.MaxFileSize, 10)
	case "chunk-size":
		return strconv.Itoa(cfg.ChunkSize)
	case "chunk-overlap":
		return strconv.Itoa(cfg.ChunkOverlap)
	case "follow-symlinks":
		return strconv.FormatBool(cfg.FollowSymlinks)
	}
	return ""
}

// rememberedSettings sets in cfg what the index remembers of the settings
// the user did not give for this run (told), and returns what this build
// is to remember. A new index, or one built by a lore that did not
// remember settings, takes the configuration's. follow-symlinks is
// remembered however it was set, so a configuration (config.yaml,
// LORE_FOLLOW_SYMLINKS) changed since does not change what an index may
// hold: that takes the flag, and a notice (returned) says so, where it
// was silent before.
func (e *Engine) rememberedSettings(ctx context.Context, cfg *config.Config, told []string) (map[string]string, []string, error) {
	var had map[string]string
	if r, err := e.store.Remembered(ctx, cfg.Index); err == nil {
		had = r.Settings
	}
	out := map[string]string{}
	var notices []string
	for _, k := range RememberedKeys {
		v, ok := had[k]
		if !ok || slices.Contains(told, k) {
			continue
		}
		if conf := setting(*cfg, k); k == "follow-symlinks" && conf != v {
			notices = append(notices, fmt.Sprintf("index %q keeps follow-symlinks %s, as it was built: the configuration's %s (config.yaml or LORE_FOLLOW_SYMLINKS) does not change an index's; --follow-symlinks=%s does",
				cfg.Index, v, conf, conf))
		}
		if err := cfg.Set(k, v); err != nil {
			return nil, nil, fmt.Errorf("index %q remembers %s %q, which lore refuses (%v): give it for this run, e.g. --%s", cfg.Index, k, v, err, k)
		}
		out[k] = v
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, fmt.Errorf("index %q remembers settings lore refuses (%v): give them for this run, e.g. --chunk-size 1500", cfg.Index, err)
	}
	for _, k := range told {
		out[k] = setting(*cfg, k)
	}
	out["follow-symlinks"] = setting(*cfg, "follow-symlinks")
	return out, notices, nil
}
