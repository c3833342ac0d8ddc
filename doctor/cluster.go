package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/excerpt"
)

// Cluster is what a store on servers says of them: the Weaviate store's
// Health.
type Cluster interface {
	Health(ctx context.Context) (app.ClusterHealth, error)
}

// checkCluster reports the nodes, the replication of the configured
// index's collections and their schema. Only with store: weaviate; the
// local store has no servers.
func checkCluster(ctx context.Context, open func() (Cluster, error), cfg config.Config) []Check {
	if cfg.Store != "weaviate" {
		return nil
	}
	c, err := open()
	if err != nil {
		return []Check{{Name: "cluster", Status: Fail, Detail: excerpt.FirstLine(err.Error()), Fix: "fix weaviate-endpoints"}}
	}
	h, err := c.Health(ctx)
	if err != nil {
		return []Check{{Name: "cluster", Status: Fail, Detail: excerpt.FirstLine(err.Error()), Fix: "start the cluster or fix weaviate-endpoints"}}
	}
	var checks []Check
	var down []string
	for _, ep := range h.Endpoints {
		if !ep.Ready {
			down = append(down, ep.URL)
		}
	}
	names := make([]string, 0, len(h.Nodes))
	for _, n := range h.Nodes {
		names = append(names, n.Name)
	}
	nodes := Check{Name: "nodes", Status: OK, Detail: fmt.Sprintf("%d of %d nodes ready (%s)", h.Ready, max(len(h.Nodes), len(h.Endpoints)), strings.Join(names, ", "))}
	if len(down) > 0 || h.Ready < len(h.Nodes) {
		nodes.Status = Warn
		if len(down) > 0 {
			nodes.Detail += "; not answering: " + strings.Join(down, ", ")
		}
		nodes.Fix = "start the nodes that are down: reads go on, writes need a majority of each index's replicas"
	}
	checks = append(checks, nodes)
	if len(h.Settings) > 0 {
		// A search still answers (in the cluster's own order), but a
		// build that lists more than the nodes allow fails.
		checks = append(checks, Check{Name: "settings", Status: Fail, Detail: strings.Join(h.Settings, "; "),
			Fix: "change the nodes' environment as it says and restart them one at a time"})
	}
	var mine, other []app.CollectionHealth
	for _, col := range h.Collections {
		switch col.Index {
		case cfg.Index:
			mine = append(mine, col)
		case "":
			if col.Problem != "" && col.Kind != "Meta" {
				other = append(other, col)
			}
		}
	}
	if len(mine) > 0 {
		repl, schema := Check{Name: "replication", Status: OK}, Check{Name: "schema", Status: OK, Detail: fmt.Sprintf("%d collections of %q as lore creates them", len(mine), cfg.Index)}
		var probs, schemaProbs []string
		factor := mine[0].Replication
		for _, col := range mine {
			factor = min(factor, col.Replication)
			if !col.SchemaOK {
				schemaProbs = append(schemaProbs, col.Name+": "+col.Problem)
			} else if col.Problem != "" {
				probs = append(probs, col.Name+": "+col.Problem)
			}
		}
		repl.Detail = fmt.Sprintf("%q: %d replicas on %d nodes", cfg.Index, factor, mine[0].Nodes)
		switch {
		case len(probs) > 0:
			repl.Status, repl.Detail, repl.Fix = Warn, strings.Join(probs, "; "), "start the nodes that are down, or rebuild with weaviate-replication set to what the cluster has"
		case factor == 1 && mine[0].Nodes > 1:
			repl.Status, repl.Fix = Warn, "one copy: losing its node loses the index; rebuild with weaviate-replication: 3"
		}
		if len(schemaProbs) > 0 {
			schema.Status, schema.Detail, schema.Fix = Fail, strings.Join(schemaProbs, "; "), "rebuild it: lore index --rebuild"
		}
		checks = append(checks, repl, schema)
	}
	for _, col := range other {
		checks = append(checks, Check{Name: "leftover", Status: Warn, Detail: col.Name + ": " + col.Problem, Fix: "delete the collection (lore does not)"})
	}
	return checks
}
