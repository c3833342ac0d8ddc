package main

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/doctor"
	"github.com/lore-cli/lore/internal/clipboard"
	"github.com/lore-cli/lore/internal/ollama"
	"github.com/lore-cli/lore/websearch"
)

type doctorOptions struct {
	json    bool
	online  bool
	verbose bool
}

func newDoctorCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the whole setup: config, folders, index, Ollama, reranker, web, terminal",
		Long: `Check every part of lore's setup and say how to fix what is broken: the
config file and where each setting came from, the folders lore writes, the
index (SQLite's quick_check, the vector graph, files changed since), Ollama
and its models, the reranker (one timed pair), online mode and the terminal.

Each line is ✓ (ok), ! (works, could be better), ✗ (broken, with the fix on
the next line) or - (not checked). Offline, the only connection made is to
the Ollama host; --online also runs one web search.

Exit codes: 0 nothing broken (warnings allowed), 1 something is.`,
		Example: `  lore doctor
  lore doctor --online          # also one test query to the web search
  lore doctor --json | jq '.checks[] | select(.status == "fail")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A config lore cannot load is one of the things doctor
			// reports, so it loads the rest and goes on.
			l, _ := config.LoadDetailed(g.configFile, streams.Getenv, configFlags(cmd))
			setupLog(l.Config, g.debug, streams.Err)
			if code := runDoctor(cmd.Context(), l, opts, streams); code != exitOK {
				return exitCode(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.json, "json", false, "print the report as JSON")
	f.BoolVar(&opts.online, "online", false, "also run one web search (the only connection beyond Ollama)")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "also list every setting and where it came from")
	return cmd
}

// runDoctor checks the setup with the real parts and prints the report;
// it returns the exit code.
func runDoctor(ctx context.Context, l config.Loaded, opts *doctorOptions, streams *ioStreams) int {
	profile := "NoTTY"
	if streams.OutTTY {
		profile = colorprofile.Detect(terminalOut(streams.Out), os.Environ()).String()
	}
	r := doctor.Run(ctx, doctor.Options{
		Loaded: l,
		Online: opts.online,
		Ollama: func(host *url.URL) doctor.OllamaProbe {
			return ollama.NewClient(host, dialer(), app.OllamaTimeouts(l.Config))
		},
		Web: func(cfg config.Config) (websearch.Searcher, error) {
			return app.NewWebSearcher(cfg, dialer())
		},
		Terminal: doctor.Terminal{Profile: profile, Clipboard: clipboard.Tool(streams.Getenv), Getenv: streams.Getenv},
	})
	if ctx.Err() != nil {
		// Checks cut short would read as failures: no report at all.
		fmt.Fprintln(streams.Err, "lore: doctor interrupted: run it again for the whole report")
		return exitCancelled
	}
	var err error
	if opts.json {
		err = r.WriteJSON(streams.Out)
	} else {
		out, styles := streams.Out, doctor.Plain()
		if streams.styled(streams.OutTTY) {
			out, styles = colorprofile.NewWriter(terminalOut(streams.Out), os.Environ()), doctor.Coloured()
		}
		err = r.WriteText(out, streams.width(100), styles)
		if err == nil && opts.verbose {
			err = r.WriteOrigins(out)
		}
	}
	if err != nil || !r.OK() {
		return exitError
	}
	return exitOK
}
