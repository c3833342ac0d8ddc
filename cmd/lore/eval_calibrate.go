package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/eval"
	"github.com/lore-cli/lore/internal/atomicfile"
	"github.com/lore-cli/lore/internal/termsafe"
)

// writeCalibration turns the run's best rerank scores into a recommended
// web-fallback-threshold: the sweep, both distributions and the config
// line; --plot draws them, --write sets the line in the config file.
func writeCalibration(cfg config.Config, g *globalOptions, opts *evalOptions, rep *eval.Report, streams *ioStreams) error {
	var samples []eval.Sample
	for _, o := range rep.Main().Questions {
		if o.Err == "" { // a failed search has no score to learn from
			samples = append(samples, eval.Sample{ID: o.ID, Answerable: o.Answerable, Best: o.Best, Agree: o.Agree})
		}
	}
	if len(samples) == 0 {
		return errors.New("calibrate: no question ran without an error")
	}
	c, err := eval.Calibrate(samples, cfg.WebFallbackThreshold, app.ModelHint(cfg))
	if err != nil {
		return err
	}
	if opts.json {
		err = writeJSON(streams.Out, struct {
			eval.Calibration
			ConfigLine string `json:"config_line,omitempty"`
			Problem    string `json:"problem,omitempty"`
		}{c, c.ConfigLine(), errText(c.Problem)})
	} else {
		out := termsafe.NewWriter(streams.Out) // notes name questions from the file
		if err = c.WriteText(out, streams.width(80)); err == nil {
			err = out.Close()
		}
	}
	if err != nil {
		return err
	}
	if opts.plot != "" {
		if err := atomicfile.Write(opts.plot, 0o644, func(w io.Writer) error { return c.WritePNG(w) }); err != nil {
			return fmt.Errorf("--plot %s: %w", opts.plot, err)
		}
		fmt.Fprintf(streams.Err, "wrote %s\n", opts.plot)
	}
	if opts.write {
		if rep.Interrupted {
			// A threshold learnt from the questions that happened to
			// finish first is not one to keep.
			fmt.Fprintln(streams.Err, "lore: --write: nothing written: the run was interrupted, so the threshold comes from part of the set")
			return nil
		}
		if c.Value == "" {
			return fmt.Errorf("--write: nothing to write: %w", c.Problem)
		}
		path := config.File(g.configFile, streams.Getenv)
		if err := config.SetInFile(path, eval.ConfigKey, c.Value); err != nil {
			return fmt.Errorf("--write: %w", err)
		}
		fmt.Fprintf(streams.Err, "set %s in %s\n", c.ConfigLine(), path)
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
