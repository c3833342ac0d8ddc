package main

import (
	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/config"
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
	cmd.AddCommand(newModelsListCmd(g, streams), newModelsPullCmd(g, streams), newModelsImportCmd(g, streams),
		newModelsPathCmd(g, streams), newModelsRmCmd(g, streams))
	return cmd
}

// modelStore is the configured models folder; installs are checked
// against the configured backend, so that a model this machine cannot run
// is refused when it arrives rather than at the first search.
func modelStore(cfg config.Config) rerank.Store {
	return rerank.Store{Dir: cfg.ModelsDir(), Check: rerank.Options{Backend: cfg.Reranker, ORTLibrary: cfg.ONNXRuntimeLib}}
}

// modelHub is where `lore models pull` downloads from (Hugging Face, or
// HF_ENDPOINT), each reply bounded; tests replace it.
var modelHub rerank.Hub = rerank.HFHub{Dial: dialer()}
