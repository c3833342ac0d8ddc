package main

import (
	"strings"
	"testing"
)

// The module path is github.com/lore-cli/lore; the command is lore. Help
// and completion scripts name the command.
func TestCommandIsNamedLore(t *testing.T) {
	e := newEnv(t)
	if r := e.run(false, "index", "--help"); r.code != 0 || !strings.Contains(r.stdout, "\n  lore index [PATH...]") {
		t.Errorf("index --help usage line:\n%s", r.stdout)
	}
	if r := e.run(false, "completion", "bash"); r.code != 0 || !strings.Contains(r.stdout, "complete -o default -F __start_lore lore") {
		t.Errorf("bash completion is not for lore: %d", r.code)
	}
}
