package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/wire"
)

func newIndexListCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the indexes: chunks, size on disk, embedder, when built",
		Example: `  lore index list
  lore index list --json | jq -r '.[].name'
  lore index ./list          # index a folder that is named list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			noteFolderNamed(cmd, streams)
			return runIndexList(cmd.Context(), cfg, asJSON, streams)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the indexes as JSON")
	return cmd
}

func runIndexList(ctx context.Context, cfg config.Config, asJSON bool, streams *ioStreams) error {
	eng, err := indexEngine(cfg)
	if err != nil {
		return err
	}
	defer eng.Close()
	list, err := eng.ListIndexes(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(streams.Out, wire.NewIndexList(list))
	}
	if len(list) == 0 {
		fmt.Fprintf(streams.Out, "no indexes in %s: build one with `lore index PATH`\n", storeWhere(cfg))
		return nil
	}
	printIndexList(streams, list, time.Now())
	return nil
}

// printIndexList prints a table: on a terminal each line fits its width
// (the embedder, last, gives way), piped it is whole and plain.
func printIndexList(streams *ioStreams, list []index.Info, now time.Time) {
	var buf bytes.Buffer
	var notes []string
	defer func() {
		for _, n := range notes {
			fmt.Fprintln(streams.Err, n)
		}
	}()
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCHUNKS\tSIZE\tBUILT\tEMBEDDER")
	for _, in := range list {
		chunks, built, embedder := strconv.Itoa(in.Chunks), "", in.Embedder
		switch {
		case !in.Built:
			chunks, built = "-", "not built"
		case in.Damaged != "":
			chunks, built = "-", "damaged"
			notes = append(notes, fmt.Sprintf("note: index %s is damaged (%s): rebuild it with `lore --index %s index --rebuild`, or remove it with `lore index rm %s`", termsafe.Line(in.Name), termsafe.Line(in.Damaged), termsafe.Line(in.Name), termsafe.Line(in.Name)))
		case in.BuiltAt != nil:
			built = in.BuiltAt.Local().Format("2006-01-02 15:04") + " (" + ago(now.Sub(*in.BuiltAt)) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termsafe.Line(in.Name), chunks, units.Bytes(in.SizeBytes), built, termsafe.Line(embedder))
	}
	tw.Flush()
	if !streams.OutTTY {
		streams.Out.Write(buf.Bytes())
		return
	}
	width := streams.OutWidth()
	bold, reset := "", ""
	if streams.styled(true) {
		bold, reset = "\x1b[1m", "\x1b[0m"
	}
	for i, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		line = ansi.Truncate(strings.TrimRight(line, " "), width-1, "…")
		if i == 0 {
			line = bold + line + reset
		}
		fmt.Fprintln(streams.Out, line)
	}
}

// ago is a duration as people say it: 40s, 5m, 3h, 2d.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(max(int(d.Seconds()), 0)) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d ago"
}

// noteFolderNamed tells, on stderr, how to index a folder in the working
// directory that has the name of the index subcommand just run: `lore
// index list` lists, it does not index ./list.
func noteFolderNamed(cmd *cobra.Command, streams *ioStreams) {
	if fi, err := os.Stat(cmd.Name()); err == nil && fi.IsDir() {
		fmt.Fprintf(streams.Err, "note: to index the folder %s, run `lore index ./%s`\n", cmd.Name(), cmd.Name())
	}
}

// storeWhere names where the indexes are, for messages: the local folder,
// or the cluster's collections.
func storeWhere(cfg config.Config) string {
	if cfg.Store == "weaviate" {
		return "the Weaviate cluster at " + cfg.WeaviateEndpoints + " (collections " + cfg.WeaviateCollectionPrefix + "_*)"
	}
	return cfg.IndexesDir()
}

// indexEngine is the engine as the commands that manage indexes need it:
// no reranker, nothing asked of Ollama.
func indexEngine(cfg config.Config) (*app.Engine, error) {
	return app.Open(app.Options{Config: cfg, NoRerank: true, Dial: dialer()})
}

// openIndex opens the configured index of the configured store.
func openIndex(ctx context.Context, cfg config.Config) (index.Reader, error) {
	st, err := app.OpenStore(cfg)
	if err != nil {
		return nil, err
	}
	return st.Open(ctx, cfg.Index)
}
