package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/rerank"
)

func newModelsCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "Manage reranker models",
		Long: `Reranker models are cross-encoders in Hugging Face's layout: one *.onnx file,
tokenizer.json, special_tokens_map.json and config.json. They live in
$XDG_DATA_HOME/lore/models.`,
		Example: `  lore models list
  lore models pull cross-encoder/ms-marco-MiniLM-L-6-v2
  lore models pull cross-encoder/ms-marco-MiniLM-L-6-v2 --variant fp32
  lore models import /media/usb/ms-marco-MiniLM-L-6-v2 --name cross-encoder/ms-marco-MiniLM-L-6-v2
  lore models path cross-encoder/ms-marco-MiniLM-L-6-v2
  lore models rm cross-encoder/ms-marco-MiniLM-L-6-v2`,
	}
	var hint string // how to get a model for the backend configured
	store := func(cmd *cobra.Command) (rerank.Store, error) {
		cfg, err := loadConfig(cmd, g, streams)
		hint = app.ModelHint(cfg)
		return rerank.Store{Dir: cfg.ModelsDir(), Check: rerank.Options{Backend: cfg.Reranker, ORTLibrary: cfg.ONNXRuntimeLib}}, err
	}

	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List installed models with sizes and checksums",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := store(cmd)
			if err != nil {
				return err
			}
			ms, err := s.List()
			if err != nil {
				return err
			}
			if asJSON {
				if ms == nil {
					ms = []rerank.Installed{}
				}
				return json.NewEncoder(termsafe.JSON(streams.Out)).Encode(ms)
			}
			if len(ms) == 0 {
				fmt.Fprintf(streams.Out, "no models installed in %s\n%s\n", s.Dir, hint)
				return nil
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVARIANT\tSIZE\tSHA256\tPATH")
			for _, m := range ms {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, m.Variant, units.Bytes(m.Bytes), m.SHA256[:16], m.Path)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var variant string
	pull := &cobra.Command{
		Use:   "pull NAME",
		Short: "Download a model from Hugging Face (needs internet)",
		Long: `Download a model from Hugging Face (needs internet). The cross-encoder
repositories ship int8 exports beside the fp32 model; --variant auto takes
the one made for this CPU (AVX-512 VNNI, AVX-512, AVX2 or arm64) when ONNX
Runtime can run it, else fp32. int8 runs on ONNX Runtime only.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := store(cmd)
			if err != nil {
				return err
			}
			if err := rerank.CheckName(args[0]); err != nil {
				return usageError{err}
			}
			switch variant {
			case rerank.VariantAuto, rerank.VariantFP32, rerank.VariantInt8:
			default:
				return usageError{fmt.Errorf("--variant %q is not one of auto, fp32, int8", variant)}
			}
			fmt.Fprintf(streams.Err, "downloading %s from Hugging Face…\n", args[0])
			m, err := s.Pull(cmd.Context(), args[0], variant, modelHub)
			if errors.Is(err, rerank.ErrBadModel) || errors.Is(err, rerank.ErrNeedsORT) || errors.Is(err, rerank.ErrNoVariant) {
				return err // it is there, and cannot run here
			}
			if err != nil {
				return fmt.Errorf("%w (offline? copy the model folder over and run `lore models import DIR`)", err)
			}
			fmt.Fprintf(streams.Out, "installed %s (%s, %s) in %s\n", m.Name, m.Variant, units.Bytes(m.Bytes), m.Path)
			return nil
		},
	}
	pull.Flags().StringVar(&variant, "variant", rerank.VariantAuto, "fp32, int8, or auto: int8 when this CPU and ONNX Runtime run it")

	var name string
	imp := &cobra.Command{
		Use:   "import DIR",
		Short: "Install a model from a folder (for air-gapped machines)",
		Long: `Install a model from a folder (for air-gapped machines). The model is loaded
and scores one test pair before it is installed: a folder lore cannot run is
refused (exit 2) and nothing is installed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := store(cmd)
			if err != nil {
				return err
			}
			if streams.ErrTTY {
				fmt.Fprintln(streams.Err, "checking the model with a test pair…")
			}
			m, err := s.Import(cmd.Context(), args[0], name)
			if errors.Is(err, rerank.ErrBadModel) || errors.Is(err, rerank.ErrBadName) || errors.Is(err, rerank.ErrNeedsORT) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "installed %s (%s, %s, sha256 %s) in %s\n", m.Name, m.Variant, units.Bytes(m.Bytes), m.SHA256[:16], m.Path)
			return nil
		},
	}
	imp.Flags().StringVar(&name, "name", "", "install under this name (default: config.json's _name_or_path, else the folder name)")

	path := &cobra.Command{
		Use:   "path NAME",
		Short: "Print the folder of an installed model",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := store(cmd)
			if err != nil {
				return err
			}
			dir, err := s.Find(args[0])
			if err != nil {
				return fmt.Errorf("%w: %s", err, hint)
			}
			fmt.Fprintln(streams.Out, dir)
			return nil
		},
	}
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove an installed model",
		Long: `Remove an installed model, broken or not. When it is the model lore reranks
with, lore says what it uses now: the other default model if one is
installed, else the fused order.`,
		Example: `  lore models rm cross-encoder/ms-marco-MiniLM-L-6-v2`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			return runModelsRm(cfg, args[0], streams)
		},
	}
	cmd.AddCommand(list, pull, imp, path, rm)
	return cmd
}

func runModelsRm(cfg config.Config, name string, streams *ioStreams) error {
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
		fmt.Fprintf(streams.Out, "lore now keeps the fused order: %s\n", app.ModelHint(cfg))
	}
	return nil
}

// modelHub is where `lore models pull` downloads from (Hugging Face, or
// HF_ENDPOINT), each reply bounded; tests replace it.
var modelHub rerank.Hub = rerank.HFHub{Dial: dialer()}
