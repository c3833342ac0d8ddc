package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/excerpt"
	"github.com/lore-cli/lore/internal/ollama"
)

// checkOllama asks the Ollama host for its version, then for the chat
// model and the embedding model the index needs (embedModel, "" for
// none): installed, their context length, loaded or not. Each call has
// its own timeout, so a host that accepts connections and never answers
// costs seconds, not a hang.
func checkOllama(ctx context.Context, opt Options, embedModel string) []Check {
	cfg := opt.Loaded.Config
	notChecked := func(why string) []Check {
		return []Check{{Name: "chat model", Status: Skip, Detail: cfg.ChatModel + ": not checked (" + why + ")"},
			embedSkip(embedModel, "not checked ("+why+")")}
	}
	host, err := config.ParseOllamaHost(cfg.OllamaHost)
	if err != nil {
		return append([]Check{{Name: "server", Status: Fail, Detail: "ollama-host: " + err.Error(),
			Fix: "set ollama-host to the address Ollama listens on, e.g. http://127.0.0.1:11434"}}, notChecked("no address")...)
	}
	label := host.Redacted()
	client := opt.Ollama(host)
	call := func(f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
		return f(ctx)
	}
	var version string
	err = call(func(ctx context.Context) (err error) { version, err = client.Version(ctx); return err })
	if err != nil {
		server := Check{Name: "server", Status: Fail, Detail: "not reachable at " + label, Fix: "start it: ollama serve, or set ollama-host (or OLLAMA_HOST)"}
		explained := ollama.Explain(err, label, "")
		switch {
		case errors.Is(explained, ollama.ErrNotOllama):
			server.Detail, server.Fix = "something answered at "+label+", but not Ollama", "point ollama-host (or OLLAMA_HOST) at Ollama"
		case errors.Is(err, context.DeadlineExceeded):
			server.Detail = fmt.Sprintf("%s accepted the connection but did not answer within %s", label, opt.Timeout)
			server.Fix = "is it stuck or overloaded? restart it (ollama serve), or check ollama-host"
		case !ollama.IsUnreachable(err):
			server.Detail = label + ": " + excerpt.FirstLine(err.Error())
		}
		return append([]Check{server}, notChecked("Ollama is not reachable")...)
	}
	checks := []Check{{Name: "server", Status: OK, Detail: label + ", version " + version}}

	loaded := map[string]bool{}
	var ps *api.ProcessResponse
	if call(func(ctx context.Context) (err error) { ps, err = client.ListRunning(ctx); return err }) == nil {
		for _, m := range ps.Models {
			loaded[ollama.FullName(m.Name)] = true
			loaded[ollama.FullName(m.Model)] = true
		}
	}
	model := func(name, model string) Check {
		c := Check{Name: name, Status: OK}
		var show *api.ShowResponse
		err := call(func(ctx context.Context) (err error) {
			show, err = client.Show(ctx, &api.ShowRequest{Model: model})
			return err
		})
		if err != nil {
			c.Status, c.Detail = Fail, model+": "+excerpt.FirstLine(err.Error())
			if errors.Is(ollama.Explain(err, label, model), ollama.ErrModelMissing) {
				c.Detail, c.Fix = model+" is not installed", "ollama pull "+model
			}
			return c
		}
		var parts []string
		n := ollama.ContextLength(show)
		if n > 0 {
			parts = append(parts, fmt.Sprintf("context %d tokens", n))
		}
		if loaded[ollama.FullName(model)] {
			parts = append(parts, "loaded")
		} else {
			parts = append(parts, "not loaded (loads on first use)")
		}
		c.Detail = model + ", " + strings.Join(parts, ", ")
		if name == "chat model" && n > 0 && cfg.NumCtx > n {
			c.Status = Warn
			c.Detail += fmt.Sprintf("; num-ctx %d is above it", cfg.NumCtx)
			c.Fix = fmt.Sprintf("set num-ctx to %d or less", n)
		}
		return c
	}
	checks = append(checks, model("chat model", cfg.ChatModel))
	if embedModel == "" {
		checks = append(checks, embedSkip("", ""))
	} else {
		checks = append(checks, model("embed model", embedModel))
	}
	return checks
}

func embedSkip(model, why string) Check {
	if model == "" {
		return Check{Name: "embed model", Status: Skip, Detail: "not needed (embedder none: keyword search only)"}
	}
	return Check{Name: "embed model", Status: Skip, Detail: model + ": " + why}
}
