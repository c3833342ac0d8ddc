package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/internal/termcap"
	"github.com/lore-cli/lore/session"
	"github.com/lore-cli/lore/tui"
)

type chatOptions struct {
	resume string
	online bool
	model  string
	theme  string
}

// resumeLast is --resume given without an id.
const resumeLast = "last"

func newChatCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &chatOptions{}
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Open the chat (also what `lore` alone does on a terminal)",
		Long: `Open the interactive chat on the configured index: answers stream as markdown
with [n] citations you can open in your editor; /help lists the commands.`,
		Example: `  lore                       # the chat, on a terminal
  lore chat --resume         # continue the last session
  lore chat --resume 3f9a1c0e2b7d --online --model qwen2.5:7b`,
		Args: resumeArgs(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			resumeFromArgs(opts, args)
			return runChatCmd(cmd, g, streams, opts)
		},
	}
	addChatFlags(cmd, opts)
	return cmd
}

// resumeArgs takes the word after a bare --resume as its session id
// (`lore chat --resume ID`, the README's form): pflag leaves it as an
// argument, since --resume alone means the last session. Any other
// argument is an unknown command, as before.
func resumeArgs(opts *chatOptions) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 && cmd.Flags().Changed("resume") && opts.resume == resumeLast {
			return nil
		}
		if len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return nil
	}
}

// resumeFromArgs sets the session id resumeArgs let through.
func resumeFromArgs(opts *chatOptions, args []string) {
	if len(args) == 1 {
		opts.resume = args[0]
	}
}

func addChatFlags(cmd *cobra.Command, opts *chatOptions) {
	f := cmd.Flags()
	f.StringVar(&opts.resume, "resume", "", "continue a saved session (the last one when no ID is given)")
	f.Lookup("resume").NoOptDefVal = resumeLast
	f.BoolVar(&opts.online, "online", false, "search the web when the docs do not answer")
	f.StringVarP(&opts.model, "model", "m", "", "Ollama chat model")
	f.StringVar(&opts.theme, "theme", "auto", "dark, light or auto (from the terminal's background)")
	addNoWatch(cmd)
}

func runChatCmd(cmd *cobra.Command, g *globalOptions, streams *ioStreams, opts *chatOptions) error {
	if !streams.OutTTY || !isTerminal(streams.In) {
		return usageError{errors.New("the chat needs a terminal: use `lore ask \"...\"` in scripts and pipes")}
	}
	if err := checkTheme(opts.theme); err != nil {
		return err
	}
	// The log must not write over the screen: --debug logs to the file only.
	g.debug = false
	cfg, err := loadConfig(cmd, g, streams)
	if err != nil {
		return err
	}
	if opts.online {
		cfg.Mode = "online"
	}
	if opts.model != "" {
		cfg.ChatModel = opts.model
	}
	eng, err := app.Open(app.Options{Config: cfg, Dial: dialer()})
	if err != nil {
		return err
	}
	defer eng.Close()
	ctx := cmd.Context()
	keepFresh(ctx, cfg, eng)
	resume, err := resumeSession(ctx, eng, opts.resume, cmd.Root().SuggestionsFor)
	if err != nil {
		return err
	}
	m := tui.New(ctx, eng, tui.Options{Resume: resume, Theme: opts.theme, NoColor: !streams.styled(true),
		NoLinks: noLinks(streams.Getenv),
		Getenv:  streams.Getenv, LogPath: filepath.Join(cfg.StateDir, "lore.log")})
	p := tea.NewProgram(m, tea.WithContext(ctx))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, tea.ErrInterrupted) {
		return fmt.Errorf("chat: %w", err)
	}
	return nil
}

// noLinks is where the chat prints citations as plain paths: terminals
// known not to show OSC 8 links (lore doctor reports the same guess).
func noLinks(getenv func(string) string) bool {
	s, _ := termcap.Hyperlinks(getenv)
	return s == termcap.No
}

func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func checkTheme(theme string) error {
	if theme != "auto" && theme != "dark" && theme != "light" {
		return usageError{fmt.Errorf("--theme %q: use dark, light or auto", theme)}
	}
	return nil
}

// sessionFinder is what resuming needs of the engine.
type sessionFinder interface {
	ListSessions(ctx context.Context) ([]session.Session, error)
	Session(ctx context.Context, id string) (session.Session, error)
}

// resumeSession is the id of the session the chat continues: "" for a
// new one, the most recent for resumeLast. An id that names no session
// stops here with a clear error rather than in the chat, and says which
// command was meant when it looks like a mistyped one (`lore --resume
// serach`).
func resumeSession(ctx context.Context, sessions sessionFinder, resume string, suggest func(string) []string) (string, error) {
	switch resume {
	case "":
		return "", nil
	case resumeLast:
		list, err := sessions.ListSessions(ctx)
		if err != nil {
			return "", err
		}
		if len(list) == 0 {
			return "", errors.New("no saved session to resume: start one with `lore chat`")
		}
		return list[0].ID, nil
	}
	_, err := sessions.Session(ctx, resume)
	if errors.Is(err, session.ErrNotFound) {
		if s := suggest(resume); len(s) > 0 {
			err = fmt.Errorf("%w (or did you mean `lore %s`?)", err, s[0])
		}
		return "", usageError{err}
	}
	return resume, err
}
