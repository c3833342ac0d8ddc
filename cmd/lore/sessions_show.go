package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/session"
)

type sessionsShowOptions struct {
	id   string
	json bool
}

func newSessionsShowCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &sessionsShowOptions{}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a conversation's turns and sources",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			opts.id = args[0]
			return runSessionsShow(cmd.Context(), cfg, opts, streams)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runSessionsShow(ctx context.Context, cfg config.Config, opts *sessionsShowOptions, streams *ioStreams) error {
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "sessions.db")); errors.Is(err, fs.ErrNotExist) {
		// No session was ever saved: say so, and create nothing.
		return fmt.Errorf("%w %q: no session is saved yet (the chat and lore ask save them)", session.ErrNotFound, opts.id)
	}
	st, err := openSessions(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := st.Get(ctx, opts.id)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(streams.Out, s)
	}
	// Questions, answers and labels were written by the user, the model
	// and the files: shown without their escape sequences.
	for _, t := range s.Turns {
		fmt.Fprintf(streams.Out, "## %d. %s\n\n%s\n\n", t.N, termsafe.Line(t.Question), termsafe.Text(t.Answer))
		if t.Cancelled {
			fmt.Fprint(streams.Out, "(cancelled: the answer above is partial)\n\n")
		}
		for _, src := range t.Sources {
			mark := " "
			if src.Cited {
				mark = "*"
			}
			fmt.Fprintf(streams.Out, "%s[%d] %s\n", mark, src.N, termsafe.Line(src.Label))
		}
		fmt.Fprintln(streams.Out)
	}
	return nil
}
