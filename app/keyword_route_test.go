package app

import (
	"testing"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/internal/ollamatest"
)

// Keyword-only, a question whose words the index mostly holds nowhere is
// not in the docs, however much of the rest one passage matches (issue
// 34, item 5: "Which GPU do I need to fine-tune lore's embedding model?"
// was answered from lore's docs).
func TestKeywordOnlyRefusesQuestionsOfUnknownWords(t *testing.T) {
	srv := ollamatest.New(t)
	cfg := testConfig(t, srv.URL)
	docs := t.TempDir()
	writeDocs(t, docs, map[string]string{
		"storage.md": "# Storage\n\nPrometheus keeps samples on local disk for 15 days unless the retention time is set.\n",
		"alerts.md":  "# Alerting rules\n\nAn alerting rule fires once its expression has returned series for the whole for duration.\n",
	})
	build(t, cfg, docs, false, nil)
	e, err := Open(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for q, want := range map[string]agent.Route{
		"How long does Prometheus keep samples on disk?":                agent.RouteDocs,
		"Which GPU and CUDA driver keep Prometheus samples on disk?":    agent.RouteNone, // gpu, cuda, driver: nowhere
		"Which Kubernetes operator installs Prometheus with Terraform?": agent.RouteNone,
	} {
		final, _ := ask(t, e, q)
		done, ok := final.(agent.Done)
		if !ok {
			t.Fatalf("%q: turn ended with %#v", q, final)
		}
		if done.Result.Route != want {
			t.Errorf("%q: routed %q (%s), want %q", q, done.Result.Route, done.Result.RoutedOnSignal, want)
		}
	}
}
