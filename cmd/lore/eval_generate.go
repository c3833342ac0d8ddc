package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/eval"
	"github.com/lore-cli/lore/internal/atomicfile"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/termsafe"
)

type evalGenerateOptions struct {
	n    int
	out  string
	seed uint64
}

func newEvalGenerateCmd(g *globalOptions, streams *ioStreams) *cobra.Command {
	opts := &evalGenerateOptions{}
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Draft questions from random passages of the index, for you to review",
		Long: `Pick passages of the index at random and ask the chat model for one question
each passage answers, with answer keywords found verbatim in it. The gold of
each question is its passage. Drafts go to stdout (or --out) as a question set:
read them, fix or delete the bad ones, add unanswerable questions of your own
("answerable": false), then run lore eval on the file.`,
		Example: `  lore eval generate --n 50 > questions.jsonl
  lore --index work eval generate --n 20 --seed 7 --out work-questions.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, g, streams)
			if err != nil {
				return err
			}
			if m, _ := cmd.Flags().GetString("model"); m != "" {
				cfg.ChatModel = m
			}
			if opts.n < 1 || opts.n > 10000 {
				return usageError{fmt.Errorf("--n %d is outside 1..10000", opts.n)}
			}
			if !cmd.Flags().Changed("seed") {
				opts.seed = uint64(time.Now().UnixNano())
			}
			return runEvalGenerate(cmd.Context(), cfg, opts, streams)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.n, "n", 50, "how many questions to draft")
	f.StringVarP(&opts.out, "out", "o", "", "write the drafts to this file (default stdout)")
	f.Uint64Var(&opts.seed, "seed", 0, "pick the same passages again (default: a new pick each run)")
	f.String("model", "", "chat model that drafts the questions (config chat-model)")
	return cmd
}

// draftMinChars keeps passages too short to ask about out of the pick.
const draftMinChars = 200

func runEvalGenerate(ctx context.Context, cfg config.Config, opts *evalGenerateOptions, streams *ioStreams) error {
	eng, err := app.Open(app.Options{Config: cfg, NoRerank: true, Dial: dialer()})
	if err != nil {
		return err
	}
	defer eng.Close()
	chat, err := eng.ChatClient(ctx, cfg.ChatModel)
	if err != nil {
		return err
	}
	// Twice as many passages as questions: the model declines some.
	passages, err := eng.SampleChunks(ctx, 2*opts.n, draftMinChars, opts.seed)
	if err != nil {
		return err
	}
	if len(passages) == 0 {
		return fmt.Errorf("index %s has no passage of %d characters or more to ask about", cfg.Index, draftMinChars)
	}
	var drafts []eval.Question
	failures := 0
	for _, p := range passages {
		if len(drafts) == opts.n || ctx.Err() != nil {
			break
		}
		q, err := eval.Draft(ctx, chat, cfg.ChatModel, p)
		switch {
		case err == nil:
			q.ID = fmt.Sprintf("gen-%03d", len(drafts)+1)
			drafts = append(drafts, q)
			if streams.ErrTTY {
				fmt.Fprintf(streams.Err, "\r\x1b[2K%d/%d drafted", len(drafts), opts.n)
			}
		case errors.Is(err, eval.ErrNothingToAsk), ctx.Err() != nil:
		default:
			failures++
			if failures == 3 && len(drafts) == 0 {
				return fmt.Errorf("drafting questions: %s", excerpt.FirstLine(err.Error()))
			}
		}
	}
	if streams.ErrTTY {
		fmt.Fprint(streams.Err, "\r\x1b[2K")
	}
	write := func(w io.Writer) error {
		enc := json.NewEncoder(termsafe.JSON(w))
		enc.SetEscapeHTML(false)
		for _, q := range drafts {
			if err := enc.Encode(q); err != nil {
				return err
			}
		}
		return nil
	}
	// What was drafted before a Ctrl+C is kept.
	if opts.out != "" {
		err = atomicfile.Write(opts.out, 0o644, write)
	} else {
		err = write(streams.Out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Err, "drafted %d questions from index %s: review them before use (docs/eval.md)\n", len(drafts), cfg.Index)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}
