package main

import (
	"fmt"
	"path/filepath"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/session"
)

func newSessionsCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show and remove saved conversations",
		Example: `  lore sessions list
  lore sessions show 3f9a1c0e2b7d
  lore ask --session 3f9a1c0e2b7d "and on Windows?"
  lore sessions rm 3f9a1c0e2b7d`,
	}
	cmd.AddCommand(newSessionsListCmd(g, streams), newSessionsShowCmd(g, streams), newSessionsRmCmd(g, streams))
	return cmd
}

// openSessions opens the store lore ask and the chat save turns in.
func openSessions(cfg config.Config) (*session.Store, error) {
	return session.Open(filepath.Join(cfg.DataDir, "sessions.db"))
}

// turnsAndTitle says what a removed session held: "12 turns, 'how do I…'".
func turnsAndTitle(r session.Removed) string {
	turns := fmt.Sprintf("%d turns", r.Turns)
	if r.Turns == 1 {
		turns = "1 turn"
	}
	return fmt.Sprintf("%s, '%s'", turns, ansi.Truncate(termsafe.Line(r.Title), 40, "…"))
}
