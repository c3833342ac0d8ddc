package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/session"
)

type sessionsListOptions struct {
	json  bool
	index string // only this index's sessions (--index given); "" all
}

func newSessionsListCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &sessionsListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List conversations, most recent first",
		Long: `List saved conversations, most recent first. With --index, only those
asked on that index (and those saved before lore recorded the index), as the
chat's /sessions lists them.`,
		Example: `  lore sessions list
  lore --index work sessions list
  lore sessions list --json | jq -r '.[0].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("index") {
				opts.index = cfg.Index
			}
			return runSessionsList(cmd.Context(), cfg, opts, streams)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runSessionsList(ctx context.Context, cfg config.Config, opts *sessionsListOptions, streams *ioStreams) error {
	st, err := openSessions(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	ss, err := st.List(ctx)
	if err != nil {
		return err
	}
	if opts.index != "" {
		ss = slices.DeleteFunc(ss, func(s session.Session) bool { return s.Index != "" && s.Index != opts.index })
	}
	if opts.json {
		if ss == nil {
			ss = []session.Session{} // [] for scripts, not null
		}
		return writeJSON(streams.Out, ss)
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tINDEX\tFIRST QUESTION")
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.Updated.Format(time.DateTime), termsafe.Line(cmp.Or(s.Index, "?")), termsafe.Line(s.Title))
	}
	return tw.Flush()
}
