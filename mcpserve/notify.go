package mcpserve

import (
	"context"
	"fmt"
	"path"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
)

// Live sync: when the engine says documents of an index changed (its own
// watcher applied a batch, or it noticed another process's), connected
// sessions hear of it: notifications/resources/list_changed when
// documents may have come or gone, notifications/resources/updated for
// each changed document a session subscribed to (resources/subscribe).
//
// The SDK sends list_changed itself when a resource or template is added
// or removed, debounced, to every session that may receive it (old
// protocol sessions, and new ones that listen). lore's documents are
// served through one template, so a change re-registers that template:
// the SDK then sends list_changed as it would for any change of the list.
// resources/updated goes through Server.ResourceUpdated, which reaches
// only the sessions subscribed to the URI.

// maxPendingURIs bounds the URIs waiting to be announced: past it the
// rest of a burst is dropped (list_changed still tells clients to look).
const maxPendingURIs = 1 << 16

// notifier turns the engine's SyncEvents into notifications. The engine
// calls event on its own goroutine, which must not block: event only
// records what to send, and one goroutine at a time sends it.
type notifier struct {
	srv      *mcp.Server
	relisted func() // re-registers the template: the SDK sends list_changed

	mu          sync.Mutex
	listChanged bool
	updated     []string
	pending     map[string]bool
	sending     bool
}

func (n *notifier) event(ev app.SyncEvent) {
	n.mu.Lock()
	defer n.mu.Unlock()
	// SyncEvent does not tell added documents from modified ones, and nil
	// lists mean any may have come or gone: the list may have changed
	// whenever anything did.
	n.listChanged = true
	if n.pending == nil {
		n.pending = map[string]bool{}
	}
	for _, files := range [][]index.File{ev.Changed, ev.Removed} {
		for _, f := range files {
			for _, uri := range documentURIs(ev.Index, f.Source, f.Path) {
				if !n.pending[uri] && len(n.pending) < maxPendingURIs {
					n.pending[uri] = true
					n.updated = append(n.updated, uri)
				}
			}
		}
	}
	if !n.sending {
		n.sending = true
		go n.send()
	}
}

// send sends what event recorded until nothing is left.
func (n *notifier) send() {
	for {
		n.mu.Lock()
		list, uris := n.listChanged, n.updated
		n.listChanged, n.updated, n.pending = false, nil, nil
		if !list && len(uris) == 0 {
			n.sending = false
			n.mu.Unlock()
			return
		}
		n.mu.Unlock()
		if list {
			n.relisted()
		}
		for _, uri := range uris {
			// Sessions that did not subscribe to uri get nothing; a
			// session gone meanwhile is the SDK's to skip.
			n.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
	}
}

// documentURIs are the URIs a document of index ix may be known by: its
// path relative to its source, and the absolute form resources/list uses
// when two sources hold the same relative path. Only the subscribed are
// notified, so naming both costs nothing.
func documentURIs(ix, source, rel string) []string {
	uris := []string{DocumentURI(ix, rel)}
	if source != "" {
		uris = append(uris, DocumentURI(ix, path.Join(source, rel)))
	}
	return uris
}

// subscribe accepts a subscription to a lore document URI, listed or
// not yet (a document may appear later); the SDK records it.
func subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	ix, _, err := parseURI(req.Params.URI)
	if err == nil {
		err = config.CheckIndexName(ix)
	}
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: oneLine(fmt.Sprintf("%s: not a lore document: subscribe to lore://INDEX/PATH as resources/list names them", req.Params.URI))}
	}
	return nil
}

func unsubscribe(context.Context, *mcp.UnsubscribeRequest) error { return nil }
