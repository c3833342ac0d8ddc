package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/mcpserve"
)

type mcpOptions struct {
	http       string // listen address; "" serves on stdin and stdout
	allowWrite bool
	online     bool
}

func newMCPCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &mcpOptions{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve indexes and answers to coding agents (Model Context Protocol)",
		Long: `Serve lore to MCP clients (Claude Code, Crush, editors): tools to search the
indexes, read passages, ask for cited answers and see what is indexed; every
indexed document is a resource lore://INDEX/PATH.

Tools: search, ask, get_passage, list_indexes, index_status, and index_paths
with --allow-write. ask answers offline; with --online a call may ask for web
search (online: true).

By default it speaks MCP on stdin and stdout (the client starts it); its log
goes to lore's log file. --http ADDR serves streamable HTTP at /mcp instead:
off loopback a token is required (serve-token or LORE_SERVE_TOKEN), and every
request then needs "Authorization: Bearer TOKEN".`,
		Example: `  claude mcp add lore -- lore mcp
  lore mcp --http 127.0.0.1:8766         # http://127.0.0.1:8766/mcp
  lore mcp --index work --allow-write    # another default index; agents may index`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			return runMCP(cmd.Context(), cfg, opts, streams)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.http, "http", "", "serve streamable HTTP on host:port (endpoint /mcp) instead of stdio")
	f.BoolVar(&opts.allowWrite, "allow-write", false, "add the index_paths tool: clients may build and refresh indexes")
	f.BoolVar(&opts.online, "online", false, "let ask search the web when a call asks for it (online: true)")
	addNoWatch(cmd)
	return cmd
}

func runMCP(ctx context.Context, cfg config.Config, opts *mcpOptions, streams *ioStreams) error {
	if opts.http != "" {
		if err := checkExposure(opts.http, cfg.ServeToken); err != nil {
			return usageError{err}
		}
	}
	// A user whose configured mode is online has said the web may be
	// searched; each call still asks for it (online: true).
	online := opts.online || cfg.Mode == "online"
	eng, err := app.Open(app.Options{Config: cfg, Dial: dialer()})
	if err != nil {
		return err
	}
	defer eng.Close()
	keepFresh(ctx, cfg, eng)
	newServer := func() *mcp.Server {
		return mcpserve.New(eng, mcpserve.Options{Version: currentVersion().Version, AllowWrite: opts.allowWrite, AllowOnline: online, Log: slog.Default(), DefaultK: cfg.TopK})
	}
	if opts.http == "" {
		return serveStdio(ctx, newServer(), streams)
	}
	return serveMCPHTTP(ctx, newServer, opts.http, cfg, streams)
}

// serveStdio speaks MCP on the command's stdin and stdout until the client
// closes stdin. stdout carries the protocol and nothing else: lore's own
// os.Stdout is pointed at stderr meanwhile, so that a stray print in any
// package could not corrupt the stream.
func serveStdio(ctx context.Context, srv *mcp.Server, streams *ioStreams) error {
	out := streams.Out
	if f, ok := out.(*os.File); ok && f == os.Stdout {
		os.Stdout = os.Stderr
		defer func() { os.Stdout = f }()
	}
	slog.Info("mcp: serving on stdio")
	// lore's own transport: the SDK's ends the session on one malformed
	// frame and drops what it read when stdin closes.
	err := srv.Run(ctx, &mcpserve.StdioTransport{In: streams.In, Out: out})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the client closed the session, or lore was told to stop
	}
	return fmt.Errorf("mcp: %w", err)
}
