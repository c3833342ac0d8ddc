package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/termsafe"
)

type sessionsRmOptions struct {
	id string
}

func newSessionsRmCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &sessionsRmOptions{}
	return &cobra.Command{
		Use:   "rm ID",
		Short: "Delete a conversation, saying what it held",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			opts.id = args[0]
			return runSessionsRm(cmd.Context(), cfg, opts, streams)
		},
	}
}

func runSessionsRm(ctx context.Context, cfg config.Config, opts *sessionsRmOptions, streams *ioStreams) error {
	st, err := openSessions(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := st.Remove(ctx, opts.id)
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "removed session %s (%s)\n", termsafe.Line(r.ID), turnsAndTitle(r))
	return nil
}
