package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/agent"
	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/termsafe"
	"github.com/lore-cli/lore/internal/units"
	"github.com/lore-cli/lore/tui/mdstream"
	"github.com/lore-cli/lore/wire"
)

// Exit codes of lore ask, beyond the common ones.
const (
	exitNotInDocs   = 3
	exitSourcesOnly = 4
)

type askOptions struct {
	question    string
	contextFile string
	sessionID   string
	k           int
	noRerank    bool
	json        bool
	verbose     bool
	online      bool
	theme       string

	// stdinContext is `-` or `--context -`: stdin is context placed
	// before the question in the arguments.
	stdinContext bool
	context      string
}

func newAskCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &askOptions{}
	cmd := &cobra.Command{
		Use:   "ask [QUESTION]",
		Short: "Answer one question from the index, with citations",
		Long: `Answer a question from your documents: retrieve, rerank, and stream a grounded
answer from the Ollama chat model with [n] citations.

The question comes from the arguments, or from stdin when there are none.
Stdin is read as context (a file, a diff, a selection, placed before the
question) only when asked: "-" among the arguments or --context -. A question
in the arguments otherwise leaves stdin alone, so
  while read q; do lore ask --json "$q"; done < questions.txt
asks every line. Stdin is read up to 1 MiB; more is cut there, with a note.

Exit codes: 0 answered from sources, 1 error, 2 usage, 3 no confident answer
(not in the docs), 4 sources only (Ollama unreachable or the chat model not
pulled), 5 the index is damaged (rebuild it: lore index --rebuild), 130
cancelled.`,
		Example: `  lore ask "how do I cancel a context after a timeout?"
  echo "why does this fail?" | lore ask --json
  git diff | lore ask - "what does this change break?"
  lore ask --context-file main.go:10-40 "what does this function do?"
  lore ask --online "what changed in Go 1.26?"
  lore ask --session 3f9a1c0e2b7d "and on Windows?"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			if err := checkTheme(opts.theme); err != nil {
				return err
			}
			if opts.online {
				cfg.Mode = "online"
			}
			if m, _ := cmd.Flags().GetString("model"); m != "" {
				cfg.ChatModel = m
			}
			if opts.k, err = topK(cmd, opts.k, cfg.TopK); err != nil {
				return err
			}
			if opts.context != "" && opts.context != "-" {
				return usageError{fmt.Errorf("--context %q: only - (stdin) is read here; a file goes in --context-file FILE[:START-END]", opts.context)}
			}
			opts.stdinContext = opts.context == "-"
			var words []string
			for _, a := range args {
				if a == "-" {
					opts.stdinContext = true
					continue
				}
				words = append(words, a)
			}
			opts.question = strings.TrimSpace(strings.Join(words, " "))
			if opts.stdinContext && opts.question == "" {
				return usageError{errors.New("stdin as context (- or --context -) needs the question in the arguments: lore ask - \"what does this change break?\"")}
			}
			code, err := runAsk(cmd.Context(), cfg, opts, streams)
			if err != nil {
				return err
			}
			if code != exitOK {
				return exitCode(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.String("mode", "offline", "offline (only the Ollama host) or online (web search when the docs do not answer)")
	f.BoolVar(&opts.online, "online", false, "same as --mode online")
	f.String("chat-model", "llama3.2:3b", "Ollama chat model")
	f.StringP("model", "m", "", "same as --chat-model")
	f.IntVarP(&opts.k, "k", "k", 5, "sources given to the model")
	f.BoolVar(&opts.noRerank, "no-rerank", false, "do not run the cross-encoder")
	f.StringVar(&opts.sessionID, "session", "", "continue a saved conversation")
	f.BoolVar(&opts.json, "json", false, "print one JSON object")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "status and timings on stderr even when it is not a terminal")
	f.StringVar(&opts.contextFile, "context-file", "", "FILE[:START-END] placed before the question as context")
	f.StringVar(&opts.context, "context", "", "- reads stdin as context, placed before the question (same as a - argument)")
	f.StringVar(&opts.theme, "theme", "auto", "dark, light or auto (from the terminal's background) for the answer on a terminal")
	return cmd
}

// exitCode is an outcome that is not an error but has its own exit code.
type exitCode int

func (e exitCode) Error() string { return "exit " + strconv.Itoa(int(e)) }

func runAsk(ctx context.Context, cfg config.Config, opts *askOptions, streams *ioStreams) (int, error) {
	extra, err := askInput(ctx, opts, streams)
	switch {
	case ctx.Err() != nil:
		return exitCancelled, ctx.Err()
	case err != nil:
		return exitUsage, err
	}
	if opts.question == "" {
		return exitUsage, usageError{errors.New("no question: lore ask \"...\" or pipe it on stdin")}
	}
	status := newStatus(streams, opts.verbose && !opts.json || streams.ErrTTY && !opts.json)
	eng, err := app.Open(app.Options{Config: cfg, NoRerank: opts.noRerank, Dial: dialer()})
	if err != nil {
		return exitError, err
	}
	defer eng.Close()
	id, events, err := eng.Ask(ctx, app.AskRequest{SessionID: opts.sessionID, Turn: agent.Turn{Question: opts.question, Context: extra}, K: opts.k})
	if errors.Is(err, app.ErrSessionIndex) {
		return exitUsage, usageError{err}
	}
	if err != nil {
		return exitError, pointToDoctor(err)
	}
	var final agent.Event
	var streamed, saved bool
	plain := !opts.json && !streams.OutTTY
	// A sequence may be split across tokens: one filter for the stream.
	tokens := termsafe.NewWriter(streams.Out)
	for e := range events {
		switch e := e.(type) {
		case agent.Notice:
			status.note(e.Text)
		case agent.StageFinished:
			status.done(string(e.Stage), e.Duration)
		case agent.SourcesChosen:
			if e.Notice != "" {
				status.note(e.Notice)
			}
		case agent.Token:
			if plain {
				tokens.WriteString(e.Text)
				streamed = true
			}
		case agent.Saved:
			saved = true
		case agent.Done, agent.Failed, agent.Cancelled:
			final = e
		}
	}
	tokens.Close()
	res, code, runErr := outcome(final)
	switch {
	case opts.json:
		session := opts.sessionID // the conversation this turn belongs to, if any
		if saved {
			session = id
		}
		answer := wire.NewAnswer(res, session)
		_, answer.Cancelled = final.(agent.Cancelled)
		// How fresh the index was: a script can tell an answer from an
		// index kept in step from one as the last lore index left it.
		if f, err := eng.Freshness(context.WithoutCancel(ctx), cfg.Index); err == nil {
			answer.Sync = wire.NewSync(f)
		}
		if err := writeJSON(streams.Out, answer); err != nil {
			return exitError, err
		}
	default:
		printAnswer(streams, res, streamed, opts.theme)
	}
	status.timings(res)
	if saved {
		status.session(id)
	}
	if runErr != nil {
		return code, pointToDoctor(runErr)
	}
	return code, nil
}

// pointToDoctor ends the message of a setup problem (no index, Ollama
// down, a model missing) with where to look next.
func pointToDoctor(err error) error {
	if app.SetupProblem(err) {
		return fmt.Errorf("%w %s", err, app.DoctorHint)
	}
	return err
}

// outcome maps the final event to the result, exit code and error.
func outcome(final agent.Event) (agent.Result, int, error) {
	switch e := final.(type) {
	case agent.Done:
		switch e.Result.Route {
		case agent.RouteNone:
			return e.Result, exitNotInDocs, nil
		case agent.RouteSourcesOnly:
			return e.Result, exitSourcesOnly, nil
		}
		return e.Result, exitOK, nil
	case agent.Cancelled:
		return e.Result, exitCancelled, context.Canceled
	case agent.Failed:
		err := e.Err
		if e.Result.Answer != "" {
			err = fmt.Errorf("the answer broke off: %w", err)
		}
		return e.Result, exitError, err
	}
	return agent.Result{}, exitError, errors.New("the answer ended without a result")
}

// askInput reads the context file and stdin, when it is a pipe or a file
// and either no question was given (stdin is the question) or stdin was
// asked for as context (opts.stdinContext). A question in the arguments
// leaves stdin alone otherwise: a `while read` loop's input is not
// swallowed, a pipe that never closes is not waited on. Ctrl+C ends the
// wait (the read left behind ends with the process).
func askInput(ctx context.Context, opts *askOptions, streams *ioStreams) (string, error) {
	type input struct {
		question, extra string
		cut             int64
		err             error
	}
	in := streams.In
	if opts.question != "" && !opts.stdinContext {
		in = nil
	}
	done := make(chan input, 1)
	go func() {
		q, extra, cut, err := readAskInput(opts.question, opts.contextFile, in)
		done <- input{q, extra, cut, err}
	}()
	select {
	case in := <-done:
		opts.question = in.question
		if in.cut > 0 {
			fmt.Fprintf(streams.Err, "note: stdin holds more than %s: only its first %s was read (%s bytes); give less, or a range with --context-file FILE:START-END\n",
				units.Bytes(in.cut), units.Bytes(in.cut), units.Count(int(in.cut)))
		}
		return in.extra, in.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// maxStdin bounds what lore ask reads of stdin.
const maxStdin = 1 << 20

// readAskInput returns the question and the extra context from the
// question given, the context file and in (nil: stdin is not read), and
// the size stdin was cut at (0: read whole).
func readAskInput(question, contextFile string, in io.Reader) (string, string, int64, error) {
	var cut int64
	var extra []string
	if contextFile != "" {
		text, err := readContextFile(contextFile)
		if err != nil {
			return question, "", 0, usageError{err}
		}
		extra = append(extra, text)
	}
	if in != nil && stdinHasData(in) {
		b, err := io.ReadAll(io.LimitReader(in, maxStdin+1))
		if err != nil {
			return question, "", 0, fmt.Errorf("read stdin: %w", err)
		}
		if len(b) > maxStdin {
			// Cut at a character's start: half a rune would become U+FFFD.
			n := maxStdin
			for n > 0 && !utf8.RuneStart(b[n]) {
				n--
			}
			b, cut = b[:n], maxStdin
		}
		if text := strings.TrimSpace(string(b)); text != "" {
			if question == "" {
				question = text
			} else {
				extra = append([]string{text}, extra...)
			}
		}
	}
	return question, strings.Join(extra, "\n\n"), cut, nil
}

// stdinHasData is true for a pipe or a regular file, never for a terminal.
func stdinHasData(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return true // tests hand in a reader
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeNamedPipe != 0 || fi.Mode().IsRegular()
}

// readContextFile reads FILE or FILE:START-END (1-based, inclusive lines).
func readContextFile(spec string) (string, error) {
	path, rng := spec, ""
	if i := strings.LastIndexByte(spec, ':'); i > 0 {
		if _, err := os.Stat(spec); err != nil {
			path, rng = spec[:i], spec[i+1:]
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--context-file: %w", err)
	}
	if rng == "" {
		return fmt.Sprintf("%s:\n%s", path, b), nil
	}
	from, to, ok := strings.Cut(rng, "-")
	start, err1 := strconv.Atoi(from)
	end, err2 := strconv.Atoi(to)
	if !ok || err1 != nil || err2 != nil || start < 1 || end < start {
		return "", fmt.Errorf("--context-file: %q is not FILE:START-END with 1 <= START <= END", spec)
	}
	lines := strings.Split(string(b), "\n")
	if start > len(lines) {
		return "", fmt.Errorf("--context-file: %s has %d lines, not %d", path, len(lines), start)
	}
	return fmt.Sprintf("%s:%d-%d:\n%s", path, start, min(end, len(lines)), strings.Join(lines[start-1:min(end, len(lines))], "\n")), nil
}

// printAnswer prints the answer (rendered as markdown on a terminal; plain
// text otherwise, where it already streamed) and then the sources, all
// without the model's or the files' escape sequences.
func printAnswer(streams *ioStreams, r agent.Result, streamed bool, theme string) {
	w := streams.Out
	answer := termsafe.Text(r.Answer)
	switch {
	case streams.OutTTY && answer != "":
		if out, err := renderMarkdown(answer, streams.ErrWidth(), answerStyle(streams, theme)); err == nil {
			answer = out
		}
		fmt.Fprint(w, strings.TrimRight(answer, "\n")+"\n")
	case !streamed && answer != "":
		fmt.Fprintln(w, answer)
	case streamed:
		fmt.Fprintln(w)
	}
	if len(r.Invalid) > 0 {
		// --json lists them; a reader of the text must hear it too, on
		// stderr so that the answer on stdout stays the answer.
		fmt.Fprintln(streams.Err, invalidCitationsNote(r.Invalid))
	}
	if len(r.Sources) == 0 {
		return
	}
	if r.Answer != "" {
		fmt.Fprintln(w)
	}
	title := "Sources"
	if r.Route == agent.RouteNone || r.Route == agent.RouteSourcesOnly {
		title = "Closest passages"
	}
	fmt.Fprintln(w, title+":")
	for _, s := range r.Sources {
		mark := " "
		if s.Cited {
			mark = "*"
		}
		fmt.Fprintf(w, "%s%s\n", mark, termsafe.Line(wire.NewSource(s).Citation()))
		if r.Route == agent.RouteSourcesOnly {
			for _, l := range excerpt.Lines(s.Text, 4, 100) {
				fmt.Fprintf(w, "      %s\n", l)
			}
		}
	}
}

// invalidCitationsNote says which [n] of the answer point at no source.
func invalidCitationsNote(ns []int) string {
	marks := make([]string, len(ns))
	for i, n := range ns {
		marks[i] = fmt.Sprintf("[%d]", n)
	}
	if len(ns) == 1 {
		return "note: the answer cites " + marks[0] + ", which is not a source"
	}
	return "note: the answer cites " + strings.Join(marks[:len(marks)-1], ", ") + " and " + marks[len(marks)-1] + ", which are not sources"
}

// renderMarkdown renders an answer in a glamour style as the chat does.
func renderMarkdown(md string, width int, style string) (string, error) {
	return mdstream.Full(mdstream.Options{Style: style, Width: min(max(width-4, 40), 120)}, md)
}

// answerStyle is the markdown style of an answer on a terminal: the
// --theme, or with auto the terminal's own background (dark when it
// cannot be asked), as the chat chooses; no colour with NO_COLOR.
func answerStyle(streams *ioStreams, theme string) string {
	switch {
	case !streams.styled(true):
		return "notty"
	case theme == "dark" || theme == "light":
		return theme
	case streams.DarkBackground != nil && !streams.DarkBackground():
		return "light"
	}
	return "dark"
}

// status prints stage progress and notes on stderr, when wanted.
type status struct {
	w  io.Writer
	on bool
}

func newStatus(streams *ioStreams, on bool) *status { return &status{w: streams.Err, on: on} }

// note is a one-line notice: always on stderr (scripts read stdout), even
// when progress lines are off.
func (s *status) note(msg string) {
	slog.Info(msg)
	fmt.Fprintf(s.w, "note: %s\n", termsafe.Text(msg))
}

func (s *status) done(name string, d time.Duration) {
	if s.on {
		fmt.Fprintf(s.w, "%-9s %6.0f ms\n", name, ms(d))
	}
}

func (s *status) session(id string) {
	if s.on {
		fmt.Fprintf(s.w, "follow up with: lore ask --session %s \"...\"\n", id)
	}
}

func (s *status) timings(r agent.Result) {
	if s.on && r.Total > 0 {
		fmt.Fprintf(s.w, "route %s, first token %.0f ms, total %.0f ms, %d prompt + %d answer tokens\n", r.Route, ms(r.FirstToken), ms(r.Total), r.PromptTokens, r.AnswerTokens)
	}
}
