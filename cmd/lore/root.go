package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"charm.land/lipgloss/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/logfile"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/wire"
)

// Exit codes. Scripts depend on them; keep them stable.
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitDamaged   = 5 // the index is damaged: lore index --rebuild
	exitCancelled = 130
)

// ioStreams are a command's terminal, so tests can run commands without one.
type ioStreams struct {
	In       io.Reader
	Out, Err io.Writer
	InTTY    bool // stdin is a terminal: lore may ask a question
	OutTTY   bool
	ErrTTY   bool
	Getenv   func(string) string
	ErrWidth func() int // the widths of the terminals, 80 when unknown
	OutWidth func() int
	// DarkBackground asks the terminal whether its background is dark
	// (true when it cannot be asked).
	DarkBackground func() bool
}

func newIO() *ioStreams {
	return &ioStreams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InTTY:    term.IsTerminal(int(os.Stdin.Fd())),
		OutTTY:   term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY:   term.IsTerminal(int(os.Stderr.Fd())),
		Getenv:   os.Getenv,
		ErrWidth: func() int { return termWidth(os.Stderr) },
		OutWidth: func() int { return termWidth(os.Stdout) },
		DarkBackground: func() bool {
			if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
				return true
			}
			return lipgloss.HasDarkBackground(os.Stdin, os.Stdout)
		},
	}
}

func termWidth(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return 80
	}
	return w
}

// width is the width to lay stdout out in: the terminal's, or fallback
// when stdout is not one.
func (s *ioStreams) width(fallback int) int {
	if s.OutTTY {
		return s.OutWidth()
	}
	return fallback
}

// styled reports whether output to a terminal may carry colours and
// styles: not with NO_COLOR set, nor on TERM=dumb.
func (s *ioStreams) styled(tty bool) bool {
	return tty && s.Getenv("NO_COLOR") == "" && s.Getenv("TERM") != "dumb"
}

// writeJSON prints v as every --json does, so that one command's output
// reads like another's: indented (the shape lore index, search and ask
// always printed, which scripts and golden files pin), and with no byte a
// terminal would obey. JSONL (lore eval generate) is a format, not --json.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(termsafe.JSON(w))
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeNDJSON writes v as one line of JSON (a stream of events).
func writeNDJSON(w io.Writer, v any) error {
	return json.NewEncoder(termsafe.JSON(w)).Encode(v)
}

// usageError marks errors in how lore was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// globalOptions are the flags every command has.
type globalOptions struct {
	configFile string
	debug      bool
}

// Main runs lore with args and returns the process exit code.
func Main(args []string, streams *ioStreams) (code int) {
	// Last line of defence: whatever the input, no stack trace on screen.
	defer func() {
		if r := recover(); r != nil {
			slog.Error("panic", "panic", r, "stack", string(debug.Stack()))
			fmt.Fprintf(streams.Err, "lore: internal error: %s (details in the log; please report it)\n", excerpt.FirstLine(fmt.Sprint(r)))
			code = exitError
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := &countingWriter{w: streams.Out}
	s := *streams
	s.Out = out
	root := newRootCmd(&s)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var ec exitCode
	if errors.As(err, &ec) {
		return int(ec) // the command already said what happened
	}
	exit := exitError
	var ue usageError
	switch {
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		exit = exitCancelled
	case errors.As(err, &ue) || isCobraUsage(err) || errors.Is(err, index.ErrBadSource):
		exit = exitUsage
	case errors.Is(err, index.ErrCorrupt):
		exit = exitDamaged
	}
	if out.n == 0 && wantsJSON(cmd) {
		// A script reading stdout (lore search --json … | jq) sees why
		// as well as that it failed.
		writeJSON(out, jsonError(err, exit))
	}
	if exit == exitCancelled {
		fmt.Fprintln(streams.Err, "lore: interrupted: everything finished so far is saved")
		return exit
	}
	fmt.Fprintf(streams.Err, "lore: %s\n", excerpt.FirstLine(err.Error()))
	return exit
}

// countingWriter counts what a command wrote to stdout.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// terminalOut is the writer under Main's count, for what asks the
// terminal itself (its colour profile) rather than writes to it.
func terminalOut(w io.Writer) io.Writer {
	if c, ok := w.(*countingWriter); ok {
		return c.w
	}
	return w
}

// wantsJSON reports whether cmd was run with --json.
func wantsJSON(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("json")
	return f != nil && f.Value.String() == "true"
}

// jsonError is err in the wire error shape that lore serve and lore mcp
// answer with; the message is the line stderr gets.
func jsonError(err error, code int) wire.Error {
	e := wire.ErrorFrom(err)
	e.Error.Message = excerpt.FirstLine(err.Error())
	switch code {
	case exitUsage:
		e.Error.Type = wire.InvalidRequest
		if e.Error.Code == "internal" {
			e.Error.Code = "usage"
		}
	case exitCancelled:
		e.Error.Message = "interrupted: everything finished so far is saved"
	}
	return e
}

// takesText are the commands whose arguments are free text or paths,
// which may start with a dash: what to call them in the hint.
var takesText = map[string]string{"search": "text", "ask": "text", "index": "a path"}

// oneArg is cobra.ExactArgs(1) with an error that says what the argument
// is, from the command's Use ("rm ID"): cobra's own is "accepts 1 arg(s),
// received 0".
func oneArg(c *cobra.Command, args []string) error {
	if len(args) == 1 {
		return nil
	}
	what := "an argument"
	if f := strings.Fields(c.Use); len(f) > 1 {
		what = f[1]
	}
	if len(args) == 0 {
		return usageError{fmt.Errorf("missing %s: %s %s (see `%s --help`)", what, c.CommandPath(), what, c.CommandPath())}
	}
	return usageError{fmt.Errorf("%d arguments where %s takes one %s: %s %s (see `%s --help`)", len(args), c.CommandPath(), what, c.CommandPath(), what, c.CommandPath())}
}

// unknownCommand is the error for a word that is none of c's commands,
// with the commands it may be a typo of: cobra's own suggestions come on
// lines of their own, which lore does not print, or not at all (a
// command with Args set).
func unknownCommand(c *cobra.Command, word string) error {
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, set only by its own lookup
	}
	if s := c.SuggestionsFor(word); len(s) > 0 {
		return usageError{fmt.Errorf("unknown command %q for %q (did you mean %s?)", word, c.CommandPath(), strings.Join(s, " or "))}
	}
	return usageError{fmt.Errorf("unknown command %q for %q (see `%s --help`)", word, c.CommandPath(), c.CommandPath())}
}

// unknownFlag is the flag an "unknown flag" error names, as typed.
func unknownFlag(err error) string {
	msg := err.Error()
	if _, f, ok := strings.Cut(msg, "unknown flag: "); ok {
		return f
	}
	if _, f, ok := strings.Cut(msg, "unknown shorthand flag: '"); ok {
		if _, word, ok := strings.Cut(f, "' in "); ok {
			return word // -dash.md, as typed, not only its -d
		}
		return "-" + f[:strings.IndexByte(f+"'", '\'')]
	}
	return "..."
}

// isCobraUsage recognises the errors cobra returns for bad flags and args.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "unknown command", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires at most"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func newRootCmd(streams *ioStreams) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "lore",
		Short: "Ask questions of your own documents, offline",
		Long: `lore indexes folders of documents (markdown, text, HTML, code, PDF) and finds
the passages that answer your questions, with a local Ollama model.`,
		Example: `  lore                              # the chat, on a terminal
  lore index ~/notes ./docs        # build or refresh the default index
  lore index                        # refresh every folder indexed before
  lore index status                 # what the index holds, what changed on disk
  lore --index work index ~/work    # a second, separate index
  lore index list                   # every index: chunks, size, embedder, built
  lore doctor                       # check the whole setup when something is off`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// cobra's own default, set here so that resumeSession's
		// suggestions work outside cobra's command lookup too.
		SuggestionsMinimumDistance: 2,
	}
	chat := &chatOptions{}
	root.Args = resumeArgs(chat)
	addChatFlags(root, chat)
	showVersion := root.Flags().BoolP("version", "V", false, "print lore's version")
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if *showVersion {
			fmt.Fprintln(streams.Out, currentVersion().line())
			return nil
		}
		resumeFromArgs(chat, args)
		// lore alone opens the chat on a terminal; elsewhere it explains.
		if !streams.OutTTY || !isTerminal(streams.In) {
			return cmd.Help()
		}
		return runChatCmd(cmd, g, streams, chat)
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// A query may itself look like a flag (--keepalive, -v): say how
		// to search for it rather than only that the flag is unknown.
		if what := takesText[c.Name()]; what != "" && strings.HasPrefix(err.Error(), "unknown") {
			return usageError{fmt.Errorf("%w (%s that starts with - goes after --: %s -- %s)", err, what, c.CommandPath(), unknownFlag(err))}
		}
		return usageError{fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath())}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.configFile, "config", "", "config file (default $XDG_CONFIG_HOME/lore/config.yaml)")
	pf.String("index", "default", "name of the index to use")
	pf.String("ollama-host", "", "Ollama address (default $OLLAMA_HOST or http://127.0.0.1:11434)")
	pf.String("store", "local", "where indexes live: local, or weaviate (a cluster: weaviate-endpoints)")
	pf.BoolVar(&g.debug, "debug", false, "log details to stderr as well as the log file")

	root.AddCommand(newIndexCmd(g, streams), newSearchCmd(g, streams), newAskCmd(g, streams), newSessionsCmd(g, streams), newServeCmd(g, streams), newMCPCmd(g, streams),
		newModelsCmd(g, streams), newVersionCmd(streams), newChatCmd(g, streams), newEvalCmd(g, streams), newDoctorCmd(g, streams))
	registerCompletions(root, g, streams)
	for _, c := range root.Commands() {
		if c.HasSubCommands() && c.RunE == nil && c.Run == nil {
			c.RunE = unknownSubcommand
		}
	}
	return root
}

// unknownSubcommand runs for `lore models` or `lore sessions` alone (help)
// and with a word that is none of their commands (bad usage, not help and
// exit 0, which a script would take for success).
func unknownSubcommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return c.Help()
	}
	return unknownCommand(c, args[0])
}

// loadConfig layers defaults, file, environment and the flags of cmd that
// the user set, and opens the log file.
func loadConfig(cmd *cobra.Command, g *globalOptions, streams *ioStreams) (config.Config, error) {
	cfg, err := config.Load(g.configFile, streams.Getenv, configFlags(cmd))
	if err != nil {
		return cfg, usageError{err} // a bad value or name is bad usage, wherever it was set
	}
	setupLog(cfg, g.debug, streams.Err)
	return cfg, nil
}

// configFlags are the flags of cmd that the user set and that name a
// setting.
func configFlags(cmd *cobra.Command) config.Flags {
	keys := map[string]bool{}
	for _, k := range config.Keys() {
		keys[k] = true
	}
	flags := config.Flags{}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if keys[f.Name] {
			flags[f.Name] = f.Value.String()
			return
		}
		// --no-watch turns off a setting that is on by default.
		if k, ok := strings.CutPrefix(f.Name, "no-"); ok && keys[k] && f.Value.Type() == "bool" {
			on, err := strconv.ParseBool(f.Value.String())
			flags[k] = strconv.FormatBool(!on)
			if err != nil {
				flags[k] = f.Value.String() // config.Load names the bad value
			}
		}
	})
	return flags
}

// addNoWatch adds --no-watch to a command that keeps its indexes fresh.
func addNoWatch(cmd *cobra.Command) {
	cmd.Flags().Bool("no-watch", false, "do not keep the open indexes in step with their files (the watch setting)")
}

// freshKeeper is what keepFresh needs of the engine.
type freshKeeper interface{ KeepFresh(ctx context.Context) }

// keepFresh has eng keep the indexes it opens in step with their files
// until ctx ends, unless the watch setting is off.
func keepFresh(ctx context.Context, cfg config.Config, eng freshKeeper) {
	if cfg.Watch {
		eng.KeepFresh(ctx)
	}
}

// maxLogBytes bounds lore.log; the one before it is kept as lore.log.1.
const maxLogBytes = 10 << 20

// openLog opens lore.log in dir, which it creates. A relative dir (no
// HOME: lore doctor still runs) is refused: the log would land in the
// working directory. The file is bounded: a server under a flood of
// requests grew it without end.
func openLog(dir string) (*logfile.File, error) {
	if !filepath.IsAbs(dir) {
		return nil, config.ErrNoHome
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return logfile.Open(filepath.Join(dir, "lore.log"), maxLogBytes)
}

// setupLog sends slog to $XDG_STATE_HOME/lore/lore.log, and to stderr with --debug.
func setupLog(cfg config.Config, debug bool, stderr io.Writer) {
	var w io.Writer = io.Discard
	if f, err := openLog(cfg.StateDir); err == nil {
		w = f
	}
	level := slog.LevelInfo
	if debug {
		w = io.MultiWriter(w, stderr)
		level = slog.LevelDebug
		// Every connection lore opens, so a user can audit offline mode.
		recordDials(func(network, addr string) { slog.Debug("dial", "network", network, "addr", addr) })
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})))
}
