package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/rerank"
	"github.com/lore-cli/lore/session"
)

// completionTimeout bounds the one network call of completion (Ollama's
// model list): a shell waits on it at every Tab, so a down or hung Ollama
// must cost at most this, and then offers nothing.
const completionTimeout = 1500 * time.Millisecond

// completer offers the names lore knows as the shell completes: indexes,
// sessions, Ollama's models and the installed reranker models. A
// completion prints nothing but candidates: whatever fails offers none.
type completer struct {
	g       *globalOptions
	streams *ioStreams
}

// registerCompletions wires the completer into every flag and command that
// takes one of those names.
func registerCompletions(root *cobra.Command, g *globalOptions, streams *ioStreams) {
	c := completer{g, streams}
	root.RegisterFlagCompletionFunc("index", c.indexes) // persistent: every command has it
	flags := map[string]cobra.CompletionFunc{
		"model": c.ollamaModels, "chat-model": c.ollamaModels, "judge-model": c.ollamaModels, "embed-model": c.ollamaModels,
		"rerank-model": c.rerankModels,
		"session":      c.sessions, "resume": c.sessions,
	}
	args := map[string]cobra.CompletionFunc{
		"lore index rm":      c.indexes,
		"lore sessions show": c.sessions, "lore sessions rm": c.sessions,
		"lore models path": c.rerankModels, "lore models rm": c.rerankModels,
		"lore chat": c.resumed, "lore": c.resumed,
	}
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for name, fn := range flags {
			if cmd.LocalNonPersistentFlags().Lookup(name) != nil {
				cmd.RegisterFlagCompletionFunc(name, fn)
			}
		}
		if fn, ok := args[cmd.CommandPath()]; ok {
			cmd.ValidArgsFunction = firstArg(fn)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// firstArg completes a command's one argument, and nothing after it.
func firstArg(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, toComplete)
	}
}

// config is the configuration the command line being completed names
// (--config, --index, LORE_* ...), without opening the log.
func (c completer) config(cmd *cobra.Command) (config.Config, bool) {
	cfg, err := config.Load(c.g.configFile, c.streams.Getenv, configFlags(cmd))
	return cfg, err == nil
}

func (c completer) indexes(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg, ok := c.config(cmd)
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	eng, err := indexEngine(cfg)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer eng.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
	defer cancel()
	names, _ := eng.IndexNames(ctx)
	return names, cobra.ShellCompDirectiveNoFileComp
}

// sessions are the saved session ids, most recent first, each described
// by its first question.
func (c completer) sessions(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg, ok := c.config(cmd)
	path := filepath.Join(cfg.DataDir, "sessions.db")
	if _, err := os.Stat(path); !ok || err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp // completion creates nothing
	}
	st, err := session.Open(path)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	list, _ := st.List(ctx)
	var out []cobra.Completion
	for _, s := range list {
		out = append(out, cobra.CompletionWithDesc(s.ID, ansi.Truncate(termsafe.Line(s.Title), 60, "…")))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// resumed completes the session id after a bare --resume (`lore chat
// --resume ID`, where the id is an argument: see resumeArgs).
func (c completer) resumed(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if f := cmd.Flags().Lookup("resume"); f == nil || !f.Changed || f.Value.String() != resumeLast {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return c.sessions(cmd, args, toComplete)
}

// ollamaModels are the models installed in Ollama (its /api/tags).
func (c completer) ollamaModels(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg, ok := c.config(cmd)
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	eng, err := app.Open(app.Options{Config: cfg, NoRerank: true, Dial: dialer()})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer eng.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	names, _ := eng.Models(ctx)
	var out []cobra.Completion
	for _, n := range names {
		if n == termsafe.Line(n) && !strings.ContainsAny(n, " \\") { // a name from a server: a shell word or nothing
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// rerankModels are the reranker models `lore models list` lists.
func (c completer) rerankModels(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg, ok := c.config(cmd)
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, _ := rerank.Store{Dir: cfg.ModelsDir()}.Names()
	return names, cobra.ShellCompDirectiveNoFileComp
}
