package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/wire"
)

type handlers struct {
	eng Engine
	opt Options
}

// SearchIn is the search tool's arguments.
type SearchIn struct {
	Query  string `json:"query" jsonschema:"what to look for: a question in plain words or the identifiers and terms you expect in the text"`
	Index  string `json:"index,omitempty" jsonschema:"the index to search (list_indexes names them); default: the user's default index"`
	K      int    `json:"k,omitempty"` // described in addTools, from the real default
	Rerank *bool  `json:"rerank,omitempty" jsonschema:"rerank with the cross-encoder when one is installed (default true); false keeps the faster fused keyword+vector order"`
}

// AskIn is the ask tool's arguments.
type AskIn struct {
	Question string `json:"question" jsonschema:"the question, complete in itself: it starts a new conversation each call"`
	Index    string `json:"index,omitempty" jsonschema:"the index to answer from (list_indexes names them); default: the user's default index"`
	Online   bool   `json:"online,omitempty" jsonschema:"also search the web when the documents do not answer; only when the server was started with --online (default false: nothing leaves the machine)"`
}

// PassageIn is the get_passage tool's arguments.
type PassageIn struct {
	Path      string `json:"path" jsonschema:"the document's path as search returns it (relative to its source folder), or the source folder joined to it"`
	StartLine int    `json:"start_line,omitempty" jsonschema:"first line, 1-based (default 1)"`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"last line, inclusive (default: the end of the document; at most 1000 lines are returned)"`
	Index     string `json:"index,omitempty" jsonschema:"the index that holds the document; default: the user's default index"`
}

// IndexIn names an index.
type IndexIn struct {
	Index string `json:"index,omitempty" jsonschema:"the index (list_indexes names them); default: the user's default index"`
}

// BuildIn is the index_paths tool's arguments.
type BuildIn struct {
	Paths []string `json:"paths" jsonschema:"folders or files to add to the index (absolute, or relative to the folder lore mcp runs in); an empty list refreshes the folders indexed before"`
	Index string   `json:"index" jsonschema:"the index to build or refresh; a new name creates a new index"`
}

// IndexList is list_indexes' result: an object, as a tool's structured
// result must be one.
type IndexList struct {
	Default string           `json:"default"` // the index a call that names none works on
	Indexes []wire.IndexInfo `json:"indexes"`
}

func (h *handlers) addTools(s *mcp.Server) {
	indexName := func(p map[string]*jsonschema.Schema) {
		if ix, ok := p["index"]; ok {
			ix.Pattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`
		}
	}
	mcp.AddTool(s, &mcp.Tool{
		Name: "search",
		Description: `Search the user's indexed documents (notes, docs, code) for passages: hybrid keyword and vector search, reranked.
Returns the best passages first, each with its path, line range, heading and text, to cite as path:start-end.
Use it before answering from the user's own documentation, or to find where something is described; get_passage reads more lines around a hit.`,
		InputSchema: inputSchema[SearchIn](func(p map[string]*jsonschema.Schema) {
			indexName(p)
			p["query"].MinLength = ptr(1)
			p["k"].Minimum, p["k"].Maximum = ptr(1.0), ptr(float64(maxK))
			p["k"].Description = fmt.Sprintf("how many passages to return, 1 to %d; default %d (the user's top-k setting)", maxK, h.opt.DefaultK)
		}),
		Annotations: readOnly("Search documents"),
	}, h.search)

	// ask is open-world only when this server may search the web: the
	// annotations are fixed per tool, and a client that trusts
	// openWorldHint false must be right to.
	askNotes := readOnly("Ask the documents")
	askNotes.IdempotentHint = false // a model's answer differs from call to call
	askNotes.OpenWorldHint = ptr(h.opt.AllowOnline)
	mcp.AddTool(s, &mcp.Tool{
		Name: "ask",
		Description: `Answer a question from the user's indexed documents with a local model (Ollama): a short answer with [n] citations and the list of sources (path:lines).
Slower than search (it searches, reranks, then writes); prefer search when you want the passages themselves.
Says so when the documents do not cover the question. Without a running model it returns the best passages instead of an answer.`,
		InputSchema: inputSchema[AskIn](func(p map[string]*jsonschema.Schema) {
			indexName(p)
			p["question"].MinLength = ptr(1)
		}),
		Annotations: askNotes,
	}, h.ask)

	mcp.AddTool(s, &mcp.Tool{
		Name: "get_passage",
		Description: `Read lines of a document the index holds, as indexed: give a path from a search result and a line range.
Use it to see the context around a search hit. Only files inside the index's source folders can be read.`,
		InputSchema: inputSchema[PassageIn](func(p map[string]*jsonschema.Schema) {
			indexName(p)
			p["path"].MinLength = ptr(1)
			p["start_line"].Minimum, p["end_line"].Minimum = ptr(1.0), ptr(1.0)
		}),
		Annotations: readOnly("Read a passage"),
	}, h.getPassage)

	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_indexes",
		Description: `List lore's indexes: name, chunks, size, embedder and when each was built, and which one is the default.`,
		Annotations: readOnly("List indexes"),
	}, h.listIndexes)

	mcp.AddTool(s, &mcp.Tool{
		Name: "index_status",
		Description: `Describe one index: its source folders, documents and chunks by kind, embedder, size, when it was built,
files skipped and files changed on disk since (a stale index misses them).`,
		InputSchema: inputSchema[IndexIn](indexName),
		Annotations: readOnly("Index status"),
	}, h.indexStatus)

	if h.opt.AllowWrite {
		mcp.AddTool(s, &mcp.Tool{
			Name: "index_paths",
			Description: `Build or refresh an index from folders or files (markdown, text, HTML, code, PDF): only changed files are read again.
Folders are remembered: an empty paths list refreshes every folder the index holds. Can take minutes for large folders.`,
			InputSchema: inputSchema[BuildIn](func(p map[string]*jsonschema.Schema) {
				indexName(p)
				p["paths"].Items.MinLength = ptr(1)
			}),
			Annotations: &mcp.ToolAnnotations{Title: "Index folders", DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)},
		}, h.indexPaths)
	}
}

// checkIndex refuses a malformed index name before the engine sees it.
func checkIndex(name string) error {
	if name == "" {
		return nil
	}
	if err := config.CheckIndexName(name); err != nil {
		return fmt.Errorf("index: %w (list_indexes names the indexes)", err)
	}
	return nil
}

func (h *handlers) indexName(ix string) string {
	if ix == "" {
		return h.eng.DefaultIndex()
	}
	return ix
}

// toolError is err as a tool error's text: the reason and the fix, with
// the engine's own words.
func toolError(err error) error {
	switch {
	case errors.Is(err, app.ErrBusy):
		return fmt.Errorf("%v (lore is at its limit of concurrent work: call again in a few seconds)", err)
	case errors.Is(err, context.Canceled):
		return errors.New("cancelled before it finished")
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		// Bare, "unexpected EOF" says neither what ended nor what to do.
		return fmt.Errorf("the model's answer from Ollama broke off mid-stream (%w): Ollama stopped or crashed while writing; check it with `lore doctor` and ask again", err)
	}
	return err
}

func (h *handlers) search(ctx context.Context, req *mcp.CallToolRequest, in SearchIn) (*mcp.CallToolResult, wire.Search, error) {
	switch {
	case strings.TrimSpace(in.Query) == "":
		return nil, wire.Search{}, errors.New("query: empty: say what to look for")
	case in.K < 0 || in.K > maxK:
		return nil, wire.Search{}, fmt.Errorf("k: %d: give 1 to %d (or leave it out for the default)", in.K, maxK)
	}
	if err := checkIndex(in.Index); err != nil {
		return nil, wire.Search{}, err
	}
	res, err := h.eng.Search(ctx, app.SearchRequest{Index: in.Index, Query: in.Query, K: in.K,
		Stages: app.Stages{NoRerank: in.Rerank != nil && !*in.Rerank}})
	h.opt.Log.Info("tool", "name", "search", "index", h.indexName(in.Index), "results", len(res.Passages), "err", err)
	if err != nil {
		return nil, wire.Search{}, toolError(err)
	}
	out := wire.NewSearch(in.Query, res.Index, res)
	return text(searchText(out, res.Notice)), out, nil
}

// searchText is a search as a model reads it: each passage under its
// path:lines citation, or that nothing matched.
func searchText(s wire.Search, notice string) string {
	var b strings.Builder
	if notice != "" {
		fmt.Fprintf(&b, "(%s)\n\n", notice)
	}
	if len(s.Results) == 0 {
		fmt.Fprintf(&b, "No passage of index %q matches %q. Try other words (the terms the documents would use), or list_indexes for another index.", s.Index, s.Query)
		return b.String()
	}
	fmt.Fprintf(&b, "%d passages from index %q for %q, best first:\n", len(s.Results), s.Index, s.Query)
	for _, r := range s.Results {
		fmt.Fprintf(&b, "\n[%d] %s:%d-%d", r.Rank, r.Path, r.StartLine, r.EndLine)
		if r.Heading != "" {
			fmt.Fprintf(&b, " > %s", r.Heading)
		}
		fmt.Fprintf(&b, " (source %s)\n%s\n", r.Source, strings.TrimRight(r.Text, "\n"))
	}
	return b.String()
}

func (h *handlers) ask(ctx context.Context, req *mcp.CallToolRequest, in AskIn) (*mcp.CallToolResult, wire.Answer, error) {
	if strings.TrimSpace(in.Question) == "" {
		return nil, wire.Answer{}, errors.New("question: empty: ask something")
	}
	if err := checkIndex(in.Index); err != nil {
		return nil, wire.Answer{}, err
	}
	// Offline unless asked for and allowed: the engine builds a web
	// client only in online mode, so an offline call cannot reach the web
	// whatever the user's configured mode.
	mode := "offline"
	if in.Online {
		if !h.opt.AllowOnline {
			return nil, wire.Answer{}, errors.New("online: this lore mcp server answers offline only; the user can start it with `lore mcp --online` to allow web searches (ask again without online)")
		}
		mode = "online"
	}
	// The turn ends with the call: a client's cancellation cancels the
	// SDK's ctx, and that stops the engine's turn and its Ollama request.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// An agent's calls are not the user's conversations: nothing is saved.
	_, events, err := h.eng.Ask(ctx, app.AskRequest{Index: in.Index, Mode: mode, Turn: agent.Turn{Question: in.Question}, NoSave: true})
	if err != nil {
		h.opt.Log.Info("tool", "name", "ask", "index", h.indexName(in.Index), "err", err)
		return nil, wire.Answer{}, toolError(err)
	}
	p := newProgress(ctx, req)
	var notes []string
	for ev := range events {
		switch ev := ev.(type) {
		case agent.StageStarted:
			p.say(string(ev.Stage))
		case agent.Token:
			p.token()
		case agent.Notice:
			notes = append(notes, ev.Text)
		case agent.Done:
			h.opt.Log.Info("tool", "name", "ask", "index", h.indexName(in.Index), "route", ev.Result.Route, "mode", mode)
			out := wire.NewAnswer(ev.Result, "")
			return text(answerText(out, notes)), out, nil
		case agent.Failed:
			h.opt.Log.Info("tool", "name", "ask", "index", h.indexName(in.Index), "err", ev.Err)
			return nil, wire.Answer{}, toolError(ev.Err)
		case agent.Cancelled:
			return nil, wire.Answer{}, toolError(context.Canceled)
		}
	}
	return nil, wire.Answer{}, errors.New("the answer ended without a result (details in lore's log)")
}

// answerText is the answer as every client shows it, as lore serve writes
// it (wire.Answer.Text), after the notes of how it ran.
func answerText(a wire.Answer, notes []string) string {
	var lead strings.Builder
	for _, n := range notes {
		fmt.Fprintf(&lead, "(%s)\n\n", n)
	}
	if a.Route == string(agent.RouteSourcesOnly) {
		lead.WriteString("No answer was written (no model is running): the passages that best match the question are listed below; get_passage reads them.")
	}
	text, _ := a.Text(lead.String())
	return text
}

// progress reports an ask's stages, and its tokens every so often, to a
// client that sent a progress token; to one that did not, nothing.
type progress struct {
	ctx    context.Context
	req    *mcp.CallToolRequest
	token_ any
	n      float64
	tokens int
	last   time.Time
}

// tokenEvery is how often, at most, a stream of tokens is reported.
var tokenEvery = time.Second

func newProgress(ctx context.Context, req *mcp.CallToolRequest) *progress {
	p := &progress{ctx: ctx, req: req}
	if req != nil && req.Params != nil {
		p.token_ = req.Params.GetProgressToken()
	}
	return p
}

func (p *progress) say(msg string) {
	if p.token_ == nil || p.req.Session == nil {
		return
	}
	p.n++
	// A notification that cannot be sent is no reason to stop answering.
	p.req.Session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token_, Progress: p.n, Message: msg})
}

func (p *progress) token() {
	p.tokens++
	if now := time.Now(); now.Sub(p.last) >= tokenEvery {
		p.last = now
		p.say(fmt.Sprintf("generate: %d tokens", p.tokens))
	}
}

func (h *handlers) getPassage(ctx context.Context, req *mcp.CallToolRequest, in PassageIn) (*mcp.CallToolResult, wire.Passage, error) {
	switch {
	case strings.TrimSpace(in.Path) == "":
		return nil, wire.Passage{}, errors.New("path: empty: give a path from a search result")
	case in.StartLine < 0 || in.EndLine < 0 || (in.EndLine > 0 && in.EndLine < in.StartLine):
		return nil, wire.Passage{}, fmt.Errorf("lines %d-%d: give 1 <= start_line <= end_line", in.StartLine, in.EndLine)
	}
	if err := checkIndex(in.Index); err != nil {
		return nil, wire.Passage{}, err
	}
	p, err := h.eng.Passage(ctx, app.PassageRequest{Index: in.Index, Path: in.Path, Start: in.StartLine, End: in.EndLine, MaxLines: maxPassageLines})
	h.opt.Log.Info("tool", "name", "get_passage", "index", h.indexName(in.Index), "err", err)
	if err != nil {
		return nil, wire.Passage{}, toolError(err)
	}
	out := wire.NewPassage(h.indexName(in.Index), p)
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d-%d (source %s, index %q", out.Path, out.StartLine, out.EndLine, out.Source, out.Index)
	if out.Lines > 0 {
		fmt.Fprintf(&b, ", %d lines in all", out.Lines)
	}
	b.WriteString(")\n")
	if out.From == "chunks" {
		b.WriteString("(the index's stored text: the file changed on disk since it was indexed, or its text is extracted from HTML or PDF)\n")
	}
	b.WriteString(out.Text)
	if out.Truncated {
		fmt.Fprintf(&b, "\n(cut at %d lines: ask for the lines after %d)", maxPassageLines, out.EndLine)
	}
	return text(b.String()), out, nil
}

func (h *handlers) listIndexes(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, IndexList, error) {
	list, err := h.eng.ListIndexes(ctx)
	if err != nil {
		return nil, IndexList{}, toolError(err)
	}
	out := IndexList{Default: h.eng.DefaultIndex(), Indexes: wire.NewIndexList(list)}
	var b strings.Builder
	if len(out.Indexes) == 0 {
		b.WriteString("No index has been built yet: the user builds one with `lore index PATH`.")
	}
	for _, ix := range out.Indexes {
		fmt.Fprintf(&b, "%s", ix.Name)
		if ix.Name == out.Default {
			b.WriteString(" (default)")
		}
		switch {
		case ix.Damaged != "":
			fmt.Fprintf(&b, ": damaged (%s): rebuild it with lore index --rebuild, or remove it with lore index rm", oneLine(ix.Damaged))
		case !ix.Built:
			b.WriteString(": not built yet")
		default:
			fmt.Fprintf(&b, ": %d chunks, %s, embedder %s", ix.Chunks, units.Bytes(ix.SizeBytes), ix.Embedder)
			if ix.BuiltAt != nil {
				fmt.Fprintf(&b, ", built %s", ix.BuiltAt.Format(time.DateTime))
			}
		}
		b.WriteString("\n")
	}
	return text(strings.TrimRight(b.String(), "\n")), out, nil
}

func (h *handlers) indexStatus(ctx context.Context, req *mcp.CallToolRequest, in IndexIn) (*mcp.CallToolResult, wire.IndexStatus, error) {
	if err := checkIndex(in.Index); err != nil {
		return nil, wire.IndexStatus{}, err
	}
	st, err := h.eng.IndexStatus(ctx, in.Index)
	if err != nil {
		return nil, wire.IndexStatus{}, toolError(err)
	}
	out := wire.NewIndexStatus(st)
	if f, err := h.eng.Freshness(ctx, in.Index); err == nil {
		out.Sync = wire.NewSync(f)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "index %s: sources %s\n", out.Index, strings.Join(out.Sources, ", "))
	if out.Damaged != "" {
		fmt.Fprintf(&b, "damaged: %s; the user rebuilds it with lore index --rebuild", oneLine(out.Damaged))
		return text(b.String()), out, nil
	}
	fmt.Fprintf(&b, "%d documents, %d chunks, embedder %s, %s", out.Documents, out.Chunks, out.Embedder, units.Bytes(out.SizeBytes))
	if out.BuiltAt != nil {
		fmt.Fprintf(&b, ", built %s", out.BuiltAt.Format(time.DateTime))
	}
	if len(out.Skipped) > 0 {
		fmt.Fprintf(&b, "\n%s skipped", units.Plural(len(out.Skipped), "file"))
	}
	if out.Sync != nil {
		b.WriteString("\n" + syncText(out.Sync))
	}
	if len(out.Changed) == 0 {
		b.WriteString("\nup to date with the files on disk")
	} else {
		fmt.Fprintf(&b, "\n%s changed on disk since indexed (searches do not see the changes until `lore index` refreshes it):", units.Plural(len(out.Changed), "file"))
		for i, c := range out.Changed {
			if i == 20 {
				fmt.Fprintf(&b, "\n  … and %d more", len(out.Changed)-i)
				break
			}
			fmt.Fprintf(&b, "\n  %s %s", c.Change, c.Path)
		}
	}
	return text(b.String()), out, nil
}

// syncText says, for a model, whether the index follows its files.
func syncText(s *wire.Sync) string {
	if !s.Watching {
		return "not kept in step with its files: searches see it as the last `lore index` left it"
	}
	t := "kept in step with its files by " + oneLine(s.Watcher)
	switch {
	case s.Pending > 0:
		t += fmt.Sprintf(", %s waiting to be indexed", units.Plural(s.Pending, "changed file"))
	case s.SyncedAt != nil:
		t += ", synced " + s.SyncedAt.Format(time.RFC3339)
	}
	if s.VectorsPending > 0 {
		t += fmt.Sprintf("; %s found by keyword only until the embedder is back", units.Plural(s.VectorsPending, "chunk"))
	}
	if s.Error != "" {
		t += "; last batch failed: " + oneLine(s.Error)
	}
	return t
}

func (h *handlers) indexPaths(ctx context.Context, req *mcp.CallToolRequest, in BuildIn) (*mcp.CallToolResult, wire.IndexSummary, error) {
	if err := config.CheckIndexName(in.Index); err != nil {
		return nil, wire.IndexSummary{}, fmt.Errorf("index: %w", err)
	}
	paths := make([]string, len(in.Paths))
	for i, p := range in.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, wire.IndexSummary{}, fmt.Errorf("paths[%d]: %w", i, err)
		}
		paths[i] = abs
	}
	p := newProgress(ctx, req)
	last := time.Time{}
	sum, err := h.eng.Build(ctx, app.BuildRequest{Index: in.Index, Paths: paths, Progress: func(pr index.Progress) {
		if now := time.Now(); now.Sub(last) >= tokenEvery {
			last = now
			p.say(fmt.Sprintf("%s: %d/%d files, %d chunks", pr.Phase, pr.FilesDone, pr.FilesTotal, pr.Chunks))
		}
	}})
	h.opt.Log.Info("tool", "name", "index_paths", "index", in.Index, "paths", paths, "err", err)
	if err != nil {
		return nil, wire.IndexSummary{}, toolError(err)
	}
	t := fmt.Sprintf("index %q: %s indexed, %d unchanged, %d removed, %d skipped; now %s, %s (embedder %s, %.1fs)",
		sum.Index, units.Plural(sum.FilesIndexed, "file"), sum.FilesUnchanged, sum.FilesRemoved, len(sum.FilesSkipped),
		units.Plural(sum.TotalFiles, "file"), units.Plural(sum.TotalChunks, "chunk"), sum.Embedder, sum.Seconds)
	return text(t), wire.NewIndexSummary(sum), nil
}

// text is a result whose content is s; the SDK adds the structured content.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
