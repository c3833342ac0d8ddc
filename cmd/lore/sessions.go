package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

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
	var asJSON bool
	open := func(cmd *cobra.Command) (*session.Store, error) {
		cfg, err := loadConfig(cmd, g, streams)
		if err != nil {
			return nil, err
		}
		return session.Open(filepath.Join(cfg.DataDir, "sessions.db"))
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List conversations, most recent first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := open(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			ss, err := st.List(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if ss == nil {
					ss = []session.Session{}
				}
				return json.NewEncoder(termsafe.JSON(streams.Out)).Encode(ss)
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUPDATED\tINDEX\tFIRST QUESTION")
			for _, s := range ss {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.Updated.Format(time.DateTime), termsafe.Line(cmp.Or(s.Index, "?")), termsafe.Line(s.Title))
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a conversation's turns and sources",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := open(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(termsafe.JSON(streams.Out)).Encode(s)
			}
			// Questions, answers and labels were written by the user, the
			// model and the files: shown without their escape sequences.
			for _, t := range s.Turns {
				fmt.Fprintf(streams.Out, "## %d. %s\n\n%s\n\n", t.N, termsafe.Line(t.Question), termsafe.Text(t.Answer))
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
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	rm := &cobra.Command{
		Use:   "rm ID",
		Short: "Delete a conversation, saying what it held",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := open(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			r, err := st.Remove(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "removed session %s (%s)\n", termsafe.Line(r.ID), turnsAndTitle(r))
			return nil
		},
	}
	cmd.AddCommand(list, show, rm)
	return cmd
}

// turnsAndTitle says what a removed session held: "12 turns, 'how do I…'".
func turnsAndTitle(r session.Removed) string {
	turns := fmt.Sprintf("%d turns", r.Turns)
	if r.Turns == 1 {
		turns = "1 turn"
	}
	return fmt.Sprintf("%s, '%s'", turns, ansi.Truncate(termsafe.Line(r.Title), 40, "…"))
}
