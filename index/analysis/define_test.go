package analysis

import (
	"slices"
	"testing"
)

// Definitions finds the names a reference text defines, and not the
// header of a table or a sentence that merely starts with a name.
func TestDefinitions(t *testing.T) {
	text := "| Flag | Default | Description |\n" +
		"|------|---------|-------------|\n" +
		"| `--retention-days` | 15 | How long samples are kept. |\n" +
		"| PruneLast | false | Prune after the other resources. |\n" +
		"\n" +
		"- `timeout.reconciliation`: how often to poll.\n" +
		"* **jitter** – a random delay.\n" +
		"1. **Backup:** whether the peer is a backup.\n" +
		"- `argocd-repo-server` executes config management tools.\n" +
		"\n" +
		"      --repo-cache-expiration duration   Cache expiration (default 24h0m0s)\n" +
		"  -n, --namespace string                 The namespace\n" +
		"\n" +
		"Sync wave\n" +
		": An ordered group of resources.\n" +
		"--- \n" +
		"- a plain item\n"
	var got []string
	Definitions(text, func(n string) { got = append(got, n) })
	want := []string{"--retention-days", "PruneLast", "timeout.reconciliation", "jitter", "Backup",
		"--repo-cache-expiration duration", "-n, --namespace string", "Sync wave"}
	if !slices.Equal(got, want) {
		t.Errorf("Definitions:\n got %q\nwant %q", got, want)
	}
	var ids []string
	for _, n := range got {
		if id := definedIdent(n); id != "" {
			ids = append(ids, id)
		}
	}
	wantIDs := []string{"retentiondays", "prunelast", "timeoutreconciliation", "jitter", "backup", "repocacheexpiration", "namespace"}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("identifiers:\n got %q\nwant %q", ids, wantIDs)
	}
}

// An abbreviation and its word are each other's alias, as terms: conns
// and connections, repo and repository; a word with two abbreviations
// has both, in a fixed order.
func TestAliases(t *testing.T) {
	for term, want := range map[string][]string{
		"conn":       {"connect"},
		"connect":    {"conn"},
		"repositori": {"repo"},
		"configur":   {"cfg", "config"},
		"retent":     nil,
	} {
		if got := Aliases(term); !slices.Equal(got, want) {
			t.Errorf("Aliases(%q) = %q, want %q", term, got, want)
		}
	}
}
