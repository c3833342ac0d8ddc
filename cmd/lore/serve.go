package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/serve"
)

func newServeCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Answer over HTTP: an OpenAI-compatible API for any client",
		Long: `Serve lore's answers and searches over HTTP, for many clients at once:

  POST /v1/chat/completions   OpenAI's chat API; model lore, lore-online,
                              lore:INDEX or lore-online:INDEX
  POST /v1/responses          OpenAI's Responses API, the same answers
  GET  /v1/models             the models above, for each built index
  GET  /v1/models/{id}        one of them
  POST /v1/search             {"query", "index", "k", "rerank"}: lore search --json
  GET  /v1/indexes            lore index list --json
  GET  /healthz, /readyz      up; ready (the default index opens)
  GET  /metrics               Prometheus metrics

It listens on 127.0.0.1:8765 unless --addr (or serve-addr) says otherwise.
Off loopback a token is required (serve-token or LORE_SERVE_TOKEN): every
/v1 route and /metrics then need "Authorization: Bearer TOKEN".
SIGTERM or Ctrl+C stops taking requests and lets answers in flight finish
(serve-shutdown-timeout); past it, each ends with a server_shutting_down
error.`,
		Example: `  lore serve
  curl -s localhost:8765/v1/chat/completions -H 'Content-Type: application/json' \
    -d '{"model":"lore","messages":[{"role":"user","content":"How do I build an index?"}]}'
  LORE_SERVE_TOKEN=$(openssl rand -hex 16) lore serve --addr 0.0.0.0:8765`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			if addr, _ := cmd.Flags().GetString("addr"); cmd.Flags().Changed("addr") {
				cfg.ServeAddr = addr
			}
			return runServe(cmd.Context(), cfg, g.debug, streams)
		},
	}
	cmd.Flags().String("addr", "127.0.0.1:8765", "host:port to listen on (the serve-addr setting)")
	addNoWatch(cmd)
	return cmd
}

// errNeedsToken refuses to open the API to a network without a token:
// anyone who can reach the port could read every indexed document.
var errNeedsToken = errors.New("needs a token off loopback")

func runServe(ctx context.Context, cfg config.Config, debug bool, streams *ioStreams) error {
	if err := checkExposure(cfg.ServeAddr, cfg.ServeToken); err != nil {
		return usageError{err}
	}
	eng, err := app.Open(app.Options{Config: cfg, Dial: dialer()})
	if err != nil {
		return err
	}
	defer eng.Close()
	keepFresh(ctx, cfg, eng)
	ln, err := net.Listen("tcp", cfg.ServeAddr)
	if err != nil {
		return fmt.Errorf("serve: %w: is another server on that port? choose another with --addr", err)
	}
	// The request log goes to stderr as JSON lines, beside lore.log:
	// a service's log is read by machines.
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewJSONHandler(streams.Err, &slog.HandlerOptions{Level: level}))
	srv := serve.New(eng, serve.Options{Token: cfg.ServeToken, CORSOrigins: cfg.CORSOrigins(), MaxBody: cfg.ServeMaxBody,
		Log: log, Debug: debug})
	base, cancelAll := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelAll()
	hs := srv.HTTPServer(base)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(hs, ln) }()
	auth := "no token: loopback only"
	if cfg.ServeToken != "" {
		auth = "token required"
	}
	// The models name the mode (lore offline, lore-online), so the mode
	// setting plays no part here.
	log.Info("listening", "addr", "http://"+ln.Addr().String(), "index", cfg.Index, "auth", auth)

	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// SIGTERM: no new connections, a 503 for new requests on kept-alive
	// ones, and the answers in flight finish, up to the deadline; then
	// the generations still running are cancelled.
	log.Info("shutting down", "deadline", cfg.ShutdownTimeout().String())
	if err := srv.Shutdown(hs, cfg.ShutdownTimeout(), cancelAll); err != nil {
		log.Warn("answers still running at the deadline were cut", "err", err.Error())
	}
	log.Info("stopped")
	return nil
}

// checkExposure refuses a non-loopback address without a token.
func checkExposure(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve-addr %q: %w", addr, err)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("serve on %s %w: set serve-token or LORE_SERVE_TOKEN (clients send Authorization: Bearer TOKEN), or listen on 127.0.0.1", addr, errNeedsToken)
}

// isLoopback reports whether host only ever means this machine. An empty
// host or 0.0.0.0 listens on every interface; a name other than
// localhost may resolve anywhere.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
