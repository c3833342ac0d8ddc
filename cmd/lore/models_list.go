package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/rerank"
)

type modelsListOptions struct {
	json bool
}

func newModelsListCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &modelsListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List installed models with sizes and checksums",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			return runModelsList(cfg, opts, streams)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	return cmd
}

func runModelsList(cfg config.Config, opts *modelsListOptions, streams *ioStreams) error {
	s := modelStore(cfg)
	ms, err := s.List()
	if err != nil {
		return err
	}
	if opts.json {
		if ms == nil {
			ms = []rerank.Installed{} // [] for scripts, not null
		}
		return writeJSON(streams.Out, ms)
	}
	if len(ms) == 0 {
		fmt.Fprintf(streams.Out, "no models installed in %s\n%s\n", s.Dir, app.ModelHint(cfg))
		return nil
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVARIANT\tSIZE\tSHA256\tPATH")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, m.Variant, units.Bytes(m.Bytes), m.SHA256[:16], m.Path)
	}
	return tw.Flush()
}
