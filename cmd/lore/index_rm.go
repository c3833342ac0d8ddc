package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/internal/units"
)

type indexRmOptions struct {
	name string
	yes  bool
}

func newIndexRmCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &indexRmOptions{}
	cmd := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove an index and everything in its folder",
		Long: `Remove an index: its database, vectors and the list of folders it indexed
(your documents are not touched). On a terminal lore asks first; elsewhere
it needs --yes. An index that a lore index run is writing is not removed.`,
		Example: `  lore index rm work
  lore index rm --yes scratch     # in scripts`,
		Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			noteFolderNamed(cmd, streams)
			opts.name = args[0]
			return runIndexRm(cmd.Context(), cfg, opts, streams)
		},
	}
	cmd.Flags().BoolVarP(&opts.yes, "yes", "y", false, "remove without asking")
	return cmd
}

// errKept is a removal the user declined.
var errKept = errors.New("kept")

func runIndexRm(ctx context.Context, cfg config.Config, opts *indexRmOptions, streams *ioStreams) error {
	if err := config.CheckIndexName(opts.name); err != nil {
		return usageError{fmt.Errorf("index rm: %w", err)}
	}
	if !opts.yes && !streams.InTTY {
		return usageError{fmt.Errorf("not removing index %q without a confirmation: stdin is not a terminal; add --yes", opts.name)}
	}
	var confirm func(index.Info) error
	if !opts.yes {
		confirm = func(in index.Info) error {
			fmt.Fprintf(streams.Err, "remove index %s (%s)? [y/N] ", opts.name, holds(in))
			answer, err := readAnswer(ctx, streams.In)
			if err != nil {
				fmt.Fprintln(streams.Err)
				return err
			}
			if a := strings.ToLower(answer); a != "y" && a != "yes" {
				return errKept
			}
			return nil
		}
	}
	eng, err := indexEngine(cfg)
	if err != nil {
		return err
	}
	defer eng.Close()
	in, err := eng.RemoveIndex(ctx, opts.name, confirm)
	switch {
	case errors.Is(err, errKept):
		fmt.Fprintf(streams.Err, "kept index %s\n", opts.name)
		return nil
	case errors.Is(err, index.ErrNoIndex):
		return usageError{fmt.Errorf("no index named %q: %s", opts.name, indexNames(ctx, cfg))}
	case err != nil:
		return err
	}
	fmt.Fprintf(streams.Out, "removed index %s (%s)\n", opts.name, holds(in))
	return nil
}

// holds says what an index held: "1234 chunks, 5.2 MiB".
func holds(in index.Info) string {
	if !in.Built {
		// Its folder holds at most the lock, whose bytes are the pid of
		// this very removal: a size would only puzzle.
		return "not built"
	}
	if in.Damaged != "" {
		return units.Bytes(in.SizeBytes) // its chunks are unknown
	}
	return units.Plural(in.Chunks, "chunk") + ", " + units.Bytes(in.SizeBytes)
}

// indexNames lists the indexes there are, for an error naming a missing one.
func indexNames(ctx context.Context, cfg config.Config) string {
	var list []index.Info
	if eng, err := indexEngine(cfg); err == nil {
		list, _ = eng.ListIndexes(ctx)
		eng.Close()
	}
	if len(list) == 0 {
		return "there are no indexes"
	}
	names := make([]string, len(list))
	for i, in := range list {
		names[i] = termsafe.Line(in.Name)
	}
	return "the indexes are " + strings.Join(names, ", ")
}

// readAnswer reads one line from r, or returns when ctx is done: Ctrl+C
// at a prompt must not wait for Enter.
func readAnswer(ctx context.Context, r io.Reader) (string, error) {
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		return s, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
