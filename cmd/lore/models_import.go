package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/rerank"
)

type modelsImportOptions struct {
	dir  string
	name string
}

func newModelsImportCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &modelsImportOptions{}
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Install a model from a folder (for air-gapped machines)",
		Long: `Install a model from a folder (for air-gapped machines). The model is loaded
and scores one test pair before it is installed: a folder lore cannot run is
refused (exit 2) and nothing is installed.`,
		Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			opts.dir = args[0]
			return runModelsImport(cmd.Context(), cfg, opts, streams)
		},
	}
	cmd.Flags().StringVar(&opts.name, "name", "", "install under this name (default: config.json's _name_or_path, else the folder name)")
	return cmd
}

func runModelsImport(ctx context.Context, cfg config.Config, opts *modelsImportOptions, streams *ioStreams) error {
	if streams.ErrTTY {
		fmt.Fprintln(streams.Err, "checking the model with a test pair…")
	}
	m, err := modelStore(cfg).Import(ctx, opts.dir, opts.name)
	if errors.Is(err, rerank.ErrBadModel) || errors.Is(err, rerank.ErrBadName) || errors.Is(err, rerank.ErrNeedsORT) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "installed %s (%s, %s, sha256 %s) in %s\n", m.Name, m.Variant, units.Bytes(m.Bytes), m.SHA256[:16], m.Path)
	return nil
}
