package mcpserve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
)

// Every indexed document is a resource lore://INDEX/PATH, PATH relative to
// its source folder (a document two sources both hold is named by its
// absolute path: lore://INDEX//abs/path).
//
// The SDK lists only resources registered one by one, and an index may
// hold a hundred thousand documents that change with every build. So one
// template, lore://{index}/{+path}, reads them all, and a receiving
// middleware answers resources/list from the indexes themselves, a page at
// a time, with a cursor of its own.

const uriTemplate = "lore://{index}/{+path}"

// resourcePage is how many documents one resources/list answer holds.
var resourcePage = 200

// addTemplate registers the template of every document; registering it
// again has the SDK send notifications/resources/list_changed.
func (h *handlers) addTemplate(s *mcp.Server) {
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: uriTemplate,
		Name:        "document",
		Title:       "An indexed document",
		Description: "A document of a lore index, as indexed: lore://INDEX/PATH, PATH as search returns it.",
	}, h.readResource)
}

func (h *handlers) addResources(s *mcp.Server) {
	h.addTemplate(s)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			var cursor string
			if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil {
				cursor = p.Cursor
			}
			return h.listResources(ctx, cursor)
		}
	})
}

// DocumentURI is the resource URI of the document rel of index ix.
func DocumentURI(ix, rel string) string {
	return (&url.URL{Scheme: "lore", Host: ix, Path: "/" + rel}).String()
}

// parseURI is the index and path a resource URI names.
func parseURI(uri string) (string, string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "lore" || u.Host == "" || len(u.Path) < 2 {
		return "", "", fmt.Errorf("%s: not a lore document: use lore://INDEX/PATH", uri)
	}
	return u.Host, u.Path[1:], nil
}

// cursor is where a resources/list page ends: the index and how many of
// its documents were listed. Indexes are listed in name order, documents
// in the index's order; a build between two pages may shift the rest.
type cursor struct {
	Index  string `json:"i"`
	Offset int    `json:"o"`
}

// errBadCursor answers a cursor this server did not write: the client's
// only way on is a new listing.
var errBadCursor = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor: list again from the start"}

// decodeCursor is the position raw names. The client holds the cursor, so
// it is checked as any input: an offset below zero would index before
// the first document.
func decodeCursor(raw string) (cursor, error) {
	var at cursor
	if raw == "" {
		return at, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || json.Unmarshal(b, &at) != nil || at.Offset < 0 || (at.Index != "" && config.CheckIndexName(at.Index) != nil) {
		return cursor{}, errBadCursor
	}
	return at, nil
}

func (h *handlers) listResources(ctx context.Context, raw string) (*mcp.ListResourcesResult, error) {
	at, err := decodeCursor(raw)
	if err != nil {
		return nil, err
	}
	list, err := h.eng.ListIndexes(ctx)
	if err != nil {
		return nil, err
	}
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	for _, ix := range list { // index.List sorts by name
		if !ix.Built || ix.Damaged != "" || ix.Name < at.Index {
			continue
		}
		docs, err := h.eng.Documents(ctx, ix.Name)
		if err != nil {
			continue // removed or rebuilt meanwhile: the next listing sees it
		}
		names := documentNames(docs)
		start := 0
		if ix.Name == at.Index {
			start = at.Offset
		}
		for i := start; i < len(docs); i++ {
			if len(out.Resources) == resourcePage {
				b, _ := json.Marshal(cursor{Index: ix.Name, Offset: i})
				out.NextCursor = base64.RawURLEncoding.EncodeToString(b)
				return out, nil
			}
			d := docs[i]
			out.Resources = append(out.Resources, &mcp.Resource{URI: DocumentURI(ix.Name, names[i]), Name: ix.Name + ":" + names[i],
				Title: path.Base(d.Path), MIMEType: mimeType(d.Path), Description: "in " + d.Source})
		}
	}
	return out, nil
}

// documentNames are the paths the resource URIs use: relative to the
// source, or absolute where two sources hold the same relative path.
func documentNames(docs []index.File) []string {
	seen := map[string]int{}
	for _, d := range docs {
		seen[d.Path]++
	}
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = d.Path
		if seen[d.Path] > 1 {
			names[i] = path.Join(d.Source, d.Path) // starts with "/": lore://INDEX//abs
		}
	}
	return names
}

func (h *handlers) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	ix, p, err := parseURI(uri)
	if err == nil {
		err = config.CheckIndexName(ix)
	}
	if err != nil {
		// Not a name this server could have listed: the request is wrong,
		// not the document missing.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: oneLine(fmt.Sprintf("%s: not a lore document: use lore://INDEX/PATH as resources/list names them", uri))}
	}
	got, err := h.eng.Passage(ctx, app.PassageRequest{Index: ix, Path: p})
	if err != nil {
		if errors.Is(err, index.ErrNotIndexed) || errors.Is(err, index.ErrNoIndex) {
			h.opt.Log.Info("resource", "uri", uri, "err", err)
			return nil, notFound(uri)
		}
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType(p), Text: got.Text}}}, nil
}

// notFound is mcp.ResourceNotFoundError with its data encoded as JSON (the
// SDK's quotes the URI as Go does, and a control character in it made a
// reply that could not be sent).
func notFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found", Data: data}
}

// mimeType is the type of a document's text as lore serves it: markdown
// as markdown, everything else (code, HTML and PDF as extracted) as text.
func mimeType(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".mdx":
		return "text/markdown"
	case ".pdf", ".html", ".htm":
		return "text/plain" // their extracted text, not the file
	}
	if t := mime.TypeByExtension(path.Ext(p)); strings.HasPrefix(t, "text/") {
		return strings.Split(t, ";")[0]
	}
	return "text/plain"
}
