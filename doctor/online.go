package doctor

import (
	"context"
	"fmt"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/excerpt"
)

// testQuery is what lore doctor --online searches the web for.
const testQuery = "lore doctor test query"

// checkOnline reports the mode, the provider and whether its key or URL is
// set (never the key), and with Online one web search.
func checkOnline(ctx context.Context, opt Options) []Check {
	cfg := opt.Loaded.Config
	online := cfg.Mode == "online"
	mode := Check{Name: "mode", Status: OK, Detail: "offline: the Ollama host is the only connection"}
	if online {
		mode.Detail = "online: a web search when the docs do not answer"
	}
	checks := []Check{mode}
	// Missing credentials fail only where they are used.
	missing := Skip
	if online || opt.Online {
		missing = Fail
	}
	cred := Check{Name: "provider", Status: OK}
	switch cfg.WebProvider {
	case "searxng":
		cred.Detail = "searxng at " + config.RedactURL(cfg.SearXNGURL)
		if cfg.SearXNGURL == "" {
			cred.Status, cred.Detail, cred.Fix = missing, "searxng, but searxng-url is not set", "set searxng-url to your instance"
		}
	default:
		src := opt.Loaded.Origins["tavily-api-key"]
		cred.Detail = "tavily, API key set (from " + string(src.Origin)
		if src.Name != "" {
			cred.Detail += " " + src.Name
		}
		cred.Detail += ")"
		if cfg.TavilyAPIKey == "" {
			cred.Status, cred.Detail, cred.Fix = missing, "tavily, no API key", "set TAVILY_API_KEY (or tavily-api-key), or web-provider: searxng"
		}
	}
	if cred.Status == Skip {
		cred.Detail += " (needed only in online mode)"
		cred.Fix = ""
	}
	checks = append(checks, cred)

	query := Check{Name: "test query", Status: Skip, Detail: "skipped (pass --online to run one test query)"}
	if opt.Online {
		query = webQuery(ctx, opt, cfg)
	}
	return append(checks, query)
}

func webQuery(ctx context.Context, opt Options, cfg config.Config) Check {
	c := Check{Name: "test query", Status: Fail}
	web, err := opt.Web(cfg)
	if err != nil {
		c.Detail, c.Fix = excerpt.FirstLine(err.Error()), "set the provider up as the provider line says"
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, 5*opt.Timeout)
	defer cancel()
	res, err := web.Search(ctx, testQuery)
	if err != nil {
		c.Detail, c.Fix = excerpt.FirstLine(err.Error()), "check the key or the instance, and the network"
		return c
	}
	c.Status, c.Detail = OK, fmt.Sprintf("%s answered with %s", web.Name(), plural(len(res), "result"))
	return c
}
