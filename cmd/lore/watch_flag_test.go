package main

import (
	"context"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lore-cli/lore/config"
)

// TestNoWatchFlag: --no-watch on the chat, lore serve and lore mcp turns
// the watch setting off over the environment, and only that; without it
// the setting (on by default) has the engine keep its indexes fresh.
func TestNoWatchFlag(t *testing.T) {
	e := newEnv(t)
	root := newRootCmd(&ioStreams{Getenv: func(k string) string { return e.vars[k] }})
	env := func(k string) string {
		if k == "LORE_WATCH" {
			return "true"
		}
		return e.vars[k]
	}
	for _, path := range [][]string{{}, {"chat"}, {"serve"}, {"mcp"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			args []string
			want bool
		}{{nil, true}, {[]string{"--no-watch"}, false}, {[]string{"--no-watch=false"}, true}} {
			cmd.Flags().VisitAll(func(f *pflag.Flag) { f.Changed = false })
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatalf("lore %v %v: %v", path, tt.args, err)
			}
			cfg, err := config.Load("", env, configFlags(cmd))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Watch != tt.want {
				t.Errorf("lore %v %v: watch %v, want %v", path, tt.args, cfg.Watch, tt.want)
			}
			var k keeper
			keepFresh(context.Background(), cfg, &k)
			if k.called != tt.want {
				t.Errorf("lore %v %v: KeepFresh called %v, want %v", path, tt.args, k.called, tt.want)
			}
		}
	}
}

type keeper struct{ called bool }

func (k *keeper) KeepFresh(context.Context) { k.called = true }
