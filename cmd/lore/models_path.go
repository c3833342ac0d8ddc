package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
)

type modelsPathOptions struct {
	name string
}

func newModelsPathCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &modelsPathOptions{}
	return &cobra.Command{
		Use:   "path NAME",
		Short: "Print the folder of an installed model",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			opts.name = args[0]
			return runModelsPath(cfg, opts, streams)
		},
	}
}

func runModelsPath(cfg config.Config, opts *modelsPathOptions, streams *ioStreams) error {
	dir, err := modelStore(cfg).Find(opts.name)
	if err != nil {
		return fmt.Errorf("%w: %s", err, app.ModelHint(cfg))
	}
	fmt.Fprintln(streams.Out, dir)
	return nil
}
