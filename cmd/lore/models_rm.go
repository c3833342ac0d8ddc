package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/rerank"
)

type modelsRmOptions struct {
	name string
}

func newModelsRmCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &modelsRmOptions{}
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove an installed model",
		Long: `Remove an installed model, broken or not. When it is the model lore reranks
with, lore says what it uses now: the other default model if one is
installed, else the fused order.`,
		Example: `  lore models rm cross-encoder/ms-marco-MiniLM-L-6-v2`,
		Args:    oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			opts.name = args[0]
			return runModelsRm(cfg, opts, streams)
		},
	}
}

func runModelsRm(cfg config.Config, opts *modelsRmOptions, streams *ioStreams) error {
	name := opts.name
	// No install check: a model that cannot run here must still go.
	s := rerank.Store{Dir: cfg.ModelsDir()}
	active := app.RerankModel(cfg)
	err := s.Remove(name)
	switch {
	case errors.Is(err, rerank.ErrNotInstalled):
		var names []string
		ms, _ := s.List()
		for _, m := range ms {
			names = append(names, m.Name)
		}
		if len(names) == 0 {
			return usageError{fmt.Errorf("%s is not installed; no models are installed", name)}
		}
		return usageError{fmt.Errorf("%s is not installed; installed: %s", name, strings.Join(names, ", "))}
	case errors.Is(err, rerank.ErrBadName):
		return usageError{err}
	case err != nil:
		return err
	}
	fmt.Fprintf(streams.Out, "removed %s\n", name)
	switch {
	case name == cfg.RerankModel:
		fmt.Fprintf(streams.Out, "rerank-model is set to %s, so lore keeps the fused order until you install it again or change rerank-model\n", name)
	case name != active:
	case app.RerankModel(cfg) != "":
		fmt.Fprintf(streams.Out, "lore now reranks with %s\n", app.RerankModel(cfg))
	default:
		// Models of other names are never chosen on their own: name one
		// if there is one, rather than advise a download.
		var left []string
		ms, _ := s.List()
		for _, m := range ms {
			left = append(left, m.Name)
		}
		if len(left) > 0 {
			fmt.Fprintf(streams.Out, "lore now keeps the fused order: to rerank with %s, set rerank-model: %s (or LORE_RERANK_MODEL)\n", strings.Join(left, " or "), left[0])
			break
		}
		fmt.Fprintf(streams.Out, "lore now keeps the fused order: %s\n", app.ModelHint(cfg))
	}
	return nil
}
