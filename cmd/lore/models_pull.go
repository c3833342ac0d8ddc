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

type modelsPullOptions struct {
	name    string
	variant string
}

func newModelsPullCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &modelsPullOptions{}
	cmd := &cobra.Command{
		Use:   "pull NAME",
		Short: "Download a model from Hugging Face (needs internet)",
		Long: `Download a model from Hugging Face (needs internet). The cross-encoder
repositories ship int8 exports beside the fp32 model; --variant auto takes
the one made for this CPU (AVX-512 VNNI, AVX-512, AVX2 or arm64) when ONNX
Runtime can run it, else fp32. int8 runs on ONNX Runtime only.`,
		Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			opts.name = args[0]
			return runModelsPull(cmd.Context(), cfg, opts, streams)
		},
	}
	cmd.Flags().StringVar(&opts.variant, "variant", rerank.VariantAuto, "fp32, int8, or auto: int8 when this CPU and ONNX Runtime run it")
	return cmd
}

func runModelsPull(ctx context.Context, cfg config.Config, opts *modelsPullOptions, streams *ioStreams) error {
	if err := rerank.CheckName(opts.name); err != nil {
		return usageError{err}
	}
	switch opts.variant {
	case rerank.VariantAuto, rerank.VariantFP32, rerank.VariantInt8:
	default:
		return usageError{fmt.Errorf("--variant %q is not one of auto, fp32, int8", opts.variant)}
	}
	fmt.Fprintf(streams.Err, "downloading %s from Hugging Face…\n", opts.name)
	m, err := modelStore(cfg).Pull(ctx, opts.name, opts.variant, modelHub)
	if errors.Is(err, rerank.ErrBadModel) || errors.Is(err, rerank.ErrNeedsORT) || errors.Is(err, rerank.ErrNoVariant) {
		return err // it is there, and cannot run here
	}
	if err != nil {
		return fmt.Errorf("%w (offline? copy the model folder over and run `lore models import DIR`)", err)
	}
	fmt.Fprintf(streams.Out, "installed %s (%s, %s) in %s\n", m.Name, m.Variant, units.Bytes(m.Bytes), m.Path)
	return nil
}
