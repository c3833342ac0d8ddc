// Package mcpserve is lore as a Model Context Protocol server, for coding
// agents: its indexes and answers as tools (search, ask, get_passage,
// list_indexes, index_status and, when allowed, index_paths) and every
// indexed document as a resource lore://INDEX/PATH. It is an adapter over
// the engine, as package serve is over HTTP: each tool decodes, calls the
// engine and encodes package wire's shapes. The official Go SDK derives
// the tools' schemas from the typed In and Out structs and validates both.
package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
)

// Engine is what the MCP server asks of lore's engine (app.Engine).
type Engine interface {
	Search(ctx context.Context, req app.SearchRequest) (app.SearchResult, error)
	Ask(ctx context.Context, req app.AskRequest) (string, <-chan agent.Event, error)
	ListIndexes(ctx context.Context) ([]index.Info, error)
	IndexStatus(ctx context.Context, name string) (index.Status, error)
	Passage(ctx context.Context, req app.PassageRequest) (index.Passage, error)
	Documents(ctx context.Context, name string) ([]index.File, error)
	Build(ctx context.Context, req app.BuildRequest) (index.Summary, error)
	DefaultIndex() string
	// Freshness is how far an index is in step with its files (the sync
	// object of index_status).
	Freshness(ctx context.Context, name string) (index.Freshness, error)
	// Subscribe calls fn (which must not block) when documents of an
	// index changed: the server tells its sessions.
	Subscribe(fn func(app.SyncEvent)) (cancel func())
}

// Options configure the server.
type Options struct {
	// Version is lore's, as the server introduces itself.
	Version string
	// AllowWrite registers index_paths: a client may then build and
	// refresh indexes (it writes to lore's data folder and reads any
	// folder it names).
	AllowWrite bool
	// AllowOnline lets ask search the web when a call asks for it
	// (online: true). Without it such a call is refused and ask never
	// builds a web client.
	AllowOnline bool
	// Log gets one line per tool call.
	Log *slog.Logger
	// DefaultK is how many passages a search without k returns (the
	// engine's top-k setting), as the search tool describes it; 0 is the
	// built-in default.
	DefaultK int
}

// maxK bounds a search's k, as lore serve does.
const maxK = 100

// maxPassageLines caps what one get_passage returns: a model's context
// is better spent on the lines it asked about.
const maxPassageLines = 1000

// New returns the MCP server over eng, its tools and resources registered.
func New(eng Engine, opt Options) *mcp.Server {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Version == "" {
		opt.Version = "dev"
	}
	if opt.DefaultK <= 0 {
		opt.DefaultK = config.Defaults().TopK
	}
	h := &handlers{eng: eng, opt: opt}
	s := mcp.NewServer(&mcp.Implementation{Name: "lore", Title: "lore: answers from your own documents", Version: opt.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			Logger:       SDKLog(opt.Log),
			// No logging capability: lore's log is its own file, and a
			// client's log level has nothing to set.
			Capabilities:       &mcp.ServerCapabilities{},
			SubscribeHandler:   subscribe,
			UnsubscribeHandler: unsubscribe,
		})
	h.addTools(s)
	h.addResources(s)
	// For as long as the engine lives: lore makes one or two servers per
	// process.
	n := &notifier{srv: s, relisted: func() { h.addTemplate(s) }}
	eng.Subscribe(n.event)
	s.AddReceivingMiddleware(jsonrpcCodes)
	return s
}

// jsonrpcCodes gives every error lore's own methods return a JSON-RPC
// code: the SDK sends a plain Go error with code 0, which is no code at
// all, and a client cannot tell a bad request from a failure of lore's.
// Only the methods lore registers: for others the SDK's own sentinel
// errors steer it (an unknown method becomes -32601).
func jsonrpcCodes(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var werr *jsonrpc.Error
		switch {
		case err == nil:
		case errors.As(err, &werr):
			// The SDK's ResourceNotFoundError quotes the URI the Go way
			// (\x00), which is not JSON: the reply could not be written
			// and the session died with it.
			if werr.Data != nil && !json.Valid(werr.Data) {
				fixed := *werr
				fixed.Data = nil
				if uri, ok := resourceURI(req); ok {
					fixed.Data, _ = json.Marshal(map[string]string{"uri": uri})
				}
				err = &fixed
			}
		case strings.HasPrefix(method, "resources/") || strings.HasPrefix(method, "tools/"):
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: oneLine(err.Error())}
		}
		return res, err
	}
}

const instructions = `lore searches and answers from the user's own indexed documents (notes, docs, code), offline.
Use search to find passages (path:lines, with their text), get_passage to read more lines around one, ask for a
written answer with [n] citations, list_indexes and index_status to see what is indexed. Cite passages by path:lines.`

// readOnly are the annotations of a tool that changes nothing and talks
// to nothing outside the machine.
func readOnly(title string) *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f}
}

// inputSchema is the schema the SDK would derive from T, with the bounds
// that struct tags cannot say set by tune: the SDK then refuses an
// argument out of them before the handler runs.
func inputSchema[T any](tune func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err) // the types are this package's own: a test catches it
	}
	if tune != nil {
		tune(s.Properties)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// oneLine is s on one line, for a list.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// resourceURI is the URI a resources/read request names.
func resourceURI(req mcp.Request) (string, bool) {
	if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil {
		return p.URI, true
	}
	return "", false
}

// SDKLog is log for the SDK: its warnings and errors only. It logs two
// lines at Info for every session, and 25,000 initialize calls grew
// lore.log by 6.7 MB.
func SDKLog(log *slog.Logger) *slog.Logger {
	return slog.New(atLeast{log.Handler(), slog.LevelWarn})
}

type atLeast struct {
	slog.Handler
	min slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(as), h.min}
}
func (h atLeast) WithGroup(g string) slog.Handler { return atLeast{h.Handler.WithGroup(g), h.min} }
