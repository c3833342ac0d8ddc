package weaviatestore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
)

// Health is the cluster as lore's doctor reports it.
type Health struct {
	// Endpoints are the configured addresses and whether each is ready:
	// a node that died can be missing from Nodes altogether.
	Endpoints []EndpointHealth `json:"endpoints"`
	Nodes     []NodeHealth     `json:"nodes"`
	// Ready counts the HEALTHY nodes.
	Ready       int                `json:"ready"`
	Collections []CollectionHealth `json:"collections"`
	// Settings are the nodes' settings that lore needs otherwise, each
	// a sentence that names the setting and the value to give it.
	Settings []string `json:"settings"`
}

// EndpointHealth is one configured endpoint.
type EndpointHealth struct {
	URL   string `json:"url"`
	Ready bool   `json:"ready"`
}

// NodeHealth is one node: its name and Weaviate's status for it
// (HEALTHY, UNHEALTHY, UNAVAILABLE, TIMEOUT).
type NodeHealth struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// CollectionHealth is one of lore's collections.
type CollectionHealth struct {
	Name  string `json:"name"`
	Index string `json:"index"` // "" for the meta collection or one no index names
	Kind  string `json:"kind"`  // Meta, Chunks, Docs or Vectors
	// Replication is the collection's replication factor; Nodes the
	// cluster's nodes, which a factor above cannot be met by.
	Replication int `json:"replication"`
	Nodes       int `json:"nodes"`
	// SchemaOK is set when its properties are as lore creates them.
	SchemaOK bool `json:"schema_ok"`
	// Problem says what is wrong, "" when nothing is.
	Problem string `json:"problem"`
}

// Health reports the nodes, how many are ready, and for each collection
// lore made (and each one an index needs but lacks) its replication factor
// against the nodes and whether its schema is as lore creates it.
func (s *Store) Health(ctx context.Context) (Health, error) {
	var h Health
	h.Endpoints = s.probe(ctx)
	var nodes *models.NodesStatusResponse
	var dump []*models.Class
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		var err error
		if nodes, err = c.Cluster().NodesStatusGetter().Do(ctx); err != nil {
			return err
		}
		d, err := c.Schema().Getter().Do(ctx)
		if err == nil {
			dump = d.Classes
		}
		return err
	})
	if err != nil {
		return h, s.wrap(err, "read the cluster's state")
	}
	for _, n := range nodes.Nodes {
		st := ""
		if n.Status != nil {
			st = *n.Status
		}
		h.Nodes = append(h.Nodes, NodeHealth{Name: n.Name, Status: st})
		if st == models.NodeStatusStatusHEALTHY {
			h.Ready++
		}
	}
	sort.Slice(h.Nodes, func(i, j int) bool { return h.Nodes[i].Name < h.Nodes[j].Name })
	for _, cl := range dump {
		if cl.Class == metaClass(s.cfg.CollectionPrefix) {
			// The server has no call that tells its settings, but it
			// refuses a query past QUERY_MAXIMUM_RESULTS before it reads
			// anything: ask the meta collection (one object an index)
			// for as many as a build lists.
			var objs []map[string]any
			err := s.get(ctx, cl.Class, func(b *graphql.GetBuilder) *graphql.GetBuilder {
				return b.WithFields(additional("id")).WithLimit(listLimit)
			}, &objs)
			if limit, ok := maxResultsRefused(err); ok {
				h.Settings = append(h.Settings, maxResultsAdvice(limit))
			}
		}
	}

	// Which index and kind each expected collection is.
	type owner struct{ index, kind string }
	want := map[string]owner{}
	sts, err := s.states(ctx)
	if err != nil {
		return h, err
	}
	for _, st := range sts {
		for _, g := range []string{st.Current, st.Next} {
			if g == "" {
				continue
			}
			for _, k := range kinds {
				want[s.class(st.Name, g, k)] = owner{st.Name, k}
			}
		}
	}
	meta := metaClass(s.cfg.CollectionPrefix)
	seen := map[string]bool{}
	for _, cl := range dump {
		o, ok := want[cl.Class]
		switch {
		case cl.Class == meta:
			o = owner{"", "Meta"}
		case ok:
		case strings.HasPrefix(cl.Class, s.cfg.CollectionPrefix+"_"):
			o = owner{"", kindOf(cl.Class)}
		default:
			continue // not lore's
		}
		seen[cl.Class] = true
		ch := CollectionHealth{Name: cl.Class, Index: o.index, Kind: o.kind, Nodes: len(h.Nodes)}
		if cl.ReplicationConfig != nil {
			ch.Replication = int(cl.ReplicationConfig.Factor)
		}
		var probs []string
		if o.kind != "" {
			p := schemaProblems(cl, o.kind)
			ch.SchemaOK = p == ""
			if p != "" {
				probs = append(probs, "schema: "+p)
			}
		}
		if known := max(ch.Nodes, len(h.Endpoints)); ch.Replication > known {
			probs = append(probs, fmt.Sprintf("replication factor %d but the cluster has %d nodes", ch.Replication, known))
		} else if ch.Replication > 1 && h.Ready < ch.Replication {
			probs = append(probs, fmt.Sprintf("%d of its %d replicas' nodes are ready", h.Ready, ch.Replication))
		}
		if o.index == "" && o.kind != "Meta" {
			probs = append(probs, "no index names it (a removal or rebuild cut short left it): delete it")
		}
		ch.Problem = strings.Join(probs, "; ")
		h.Collections = append(h.Collections, ch)
	}
	for name, o := range want {
		if !seen[name] {
			h.Collections = append(h.Collections, CollectionHealth{Name: name, Index: o.index, Kind: o.kind, Nodes: len(h.Nodes),
				Problem: "missing: rebuild the index (lore index --rebuild)"})
		}
	}
	sort.Slice(h.Collections, func(i, j int) bool { return h.Collections[i].Name < h.Collections[j].Name })
	return h, nil
}

// kindOf is the kind a collection's name ends with.
func kindOf(class string) string {
	for _, k := range kinds {
		if strings.HasSuffix(class, "_"+k) {
			return k
		}
	}
	return ""
}

// probe asks every endpoint whether it is ready, all at once, each
// bounded by a short deadline.
func (s *Store) probe(ctx context.Context) []EndpointHealth {
	out := make([]EndpointHealth, len(s.pool.eps))
	var wg sync.WaitGroup
	for i, ep := range s.pool.eps {
		out[i].URL = ep.url
		wg.Go(func() {
			c, err := s.pool.client(ep)
			if err != nil {
				return
			}
			pctx, cancel := context.WithTimeout(ctx, min(s.cfg.Timeout, 3*time.Second))
			defer cancel()
			out[i].Ready, _ = c.Misc().ReadyChecker().Do(pctx)
		})
	}
	wg.Wait()
	return out
}
