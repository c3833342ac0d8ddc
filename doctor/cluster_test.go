package doctor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
)

type fakeCluster struct {
	h   app.ClusterHealth
	err error
}

func (f fakeCluster) Health(context.Context) (app.ClusterHealth, error) { return f.h, f.err }

func clusterChecks(t *testing.T, c Cluster) map[string]Check {
	t.Helper()
	cfg := config.Defaults()
	cfg.Store = "weaviate"
	out := map[string]Check{}
	for _, ch := range checkCluster(context.Background(), func() (Cluster, error) { return c, nil }, cfg) {
		out[ch.Name] = ch
	}
	return out
}

func TestClusterChecks(t *testing.T) {
	healthy := app.ClusterHealth{
		Endpoints: []app.EndpointHealth{{URL: "http://a", Ready: true}, {URL: "http://b", Ready: true}, {URL: "http://c", Ready: true}},
		Nodes:     []app.NodeHealth{{Name: "node0", Status: "HEALTHY"}, {Name: "node1", Status: "HEALTHY"}, {Name: "node2", Status: "HEALTHY"}},
		Ready:     3,
		Collections: []app.CollectionHealth{
			{Name: "Lore_default_g1_Chunks", Index: "default", Kind: "Chunks", Replication: 3, Nodes: 3, SchemaOK: true},
			{Name: "Lore_default_g1_Docs", Index: "default", Kind: "Docs", Replication: 3, Nodes: 3, SchemaOK: true},
		},
	}
	got := clusterChecks(t, fakeCluster{h: healthy})
	if c := got["nodes"]; c.Status != OK || !strings.Contains(c.Detail, "3 of 3 nodes ready") {
		t.Errorf("nodes: %+v", c)
	}
	if c := got["replication"]; c.Status != OK || !strings.Contains(c.Detail, "3 replicas on 3 nodes") {
		t.Errorf("replication: %+v", c)
	}
	if c := got["schema"]; c.Status != OK {
		t.Errorf("schema: %+v", c)
	}

	down := healthy
	down.Endpoints = []app.EndpointHealth{{URL: "http://a", Ready: false}, {URL: "http://b", Ready: true}, {URL: "http://c", Ready: true}}
	down.Nodes, down.Ready = down.Nodes[1:], 2
	down.Collections = []app.CollectionHealth{
		{Name: "Lore_default_g1_Chunks", Index: "default", Kind: "Chunks", Replication: 3, Nodes: 2, SchemaOK: false, Problem: "schema: terms is tokenized word, not whitespace"},
	}
	got = clusterChecks(t, fakeCluster{h: down})
	if c := got["nodes"]; c.Status != Warn || !strings.Contains(c.Detail, "http://a") || c.Fix == "" {
		t.Errorf("a node down: %+v", c)
	}
	if c := got["schema"]; c.Status != Fail || !strings.Contains(c.Fix, "--rebuild") {
		t.Errorf("a collection with another schema: %+v", c)
	}

	low := healthy
	low.Settings = []string{"the cluster's QUERY_MAXIMUM_RESULTS is 1000, fewer objects than lore reads at once (a build lists up to 10000, keyword ranking samples 2048 chunks): set QUERY_MAXIMUM_RESULTS=10000 (Weaviate's default) on every node"}
	got = clusterChecks(t, fakeCluster{h: low})
	if c := got["settings"]; c.Status != Fail || !strings.Contains(c.Detail, "QUERY_MAXIMUM_RESULTS=10000") || c.Fix == "" {
		t.Errorf("a node setting lore needs otherwise: %+v", c)
	}
	if c, ok := clusterChecks(t, fakeCluster{h: healthy})["settings"]; ok {
		t.Errorf("a healthy cluster's settings: %+v", c)
	}

	got = clusterChecks(t, fakeCluster{err: errors.New("weaviate: no endpoint answered (http://a): start the cluster or fix weaviate-endpoints")})
	if c := got["cluster"]; c.Status != Fail || !strings.Contains(c.Detail, "no endpoint answered") {
		t.Errorf("cluster down: %+v", c)
	}
	if n := len(checkCluster(context.Background(), nil, config.Defaults())); n != 0 {
		t.Errorf("the local store has %d cluster checks", n)
	}
}
