package doctor

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/internal/excerpt"
)

// ConfigSummary is where each setting came from, for --json and --verbose.
// A secret's value is never in it: only whether it is set.
type ConfigSummary struct {
	File  string      `json:"file"`
	Found bool        `json:"found"`
	Keys  []KeyOrigin `json:"keys"`
}

// KeyOrigin is one setting, its value and where the value came from.
type KeyOrigin struct {
	Key    string        `json:"key"`
	Value  string        `json:"value"`
	Origin config.Origin `json:"origin"`
	// Name is the environment variable or flag that set it.
	Name   string `json:"name,omitempty"`
	Secret bool   `json:"secret,omitempty"`
}

func summarize(l config.Loaded) ConfigSummary {
	s := ConfigSummary{File: l.File, Found: l.FileFound && l.FileErr == nil}
	for _, k := range config.Keys() {
		src := l.Origins[k]
		ko := KeyOrigin{Key: k, Value: config.RedactURL(value(l.Config, k)), Origin: src.Origin, Name: src.Name, Secret: config.Secret(k)}
		if ko.Secret {
			ko.Value = "not set"
			if value(l.Config, k) != "" {
				ko.Value = "set"
			}
		}
		s.Keys = append(s.Keys, ko)
	}
	return s
}

// value is a setting's value as text.
func value(c config.Config, key string) string {
	v := reflect.ValueOf(c)
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("yaml") == key {
			return fmt.Sprint(v.Field(i).Interface())
		}
	}
	return ""
}

// checkConfig is the config file line (valid, and how many settings each
// layer gave) and one line per value lore could not use.
func checkConfig(l config.Loaded) []Check {
	counts := map[config.Origin]int{}
	names := map[config.Origin][]string{}
	for _, k := range config.Keys() {
		src := l.Origins[k]
		if src.Origin == config.FromDefault {
			continue
		}
		counts[src.Origin]++
		if src.Name != "" {
			names[src.Origin] = append(names[src.Origin], src.Name)
		}
	}
	var layers []string
	for _, o := range []config.Origin{config.FromFile, config.FromEnv, config.FromFlag} {
		if counts[o] == 0 {
			continue
		}
		part := plural(counts[o], "key") + " from " + string(o)
		if len(layers) > 0 {
			part = fmt.Sprintf("%d from %s", counts[o], o)
		}
		if len(names[o]) > 0 {
			part += " (" + strings.Join(names[o], ", ") + ")"
		}
		layers = append(layers, part)
	}
	if len(layers) == 0 {
		layers = []string{"every setting at its default"}
	}
	var checks []Check
	file := Check{Name: "config file", Status: OK}
	switch {
	case l.FileErr != nil:
		file.Status = Fail
		file.Detail = excerpt.FirstLine(l.FileErr.Error())
		file.Fix = "fix the line it names in " + l.File + " (the other checks use the defaults meanwhile)"
		if !l.FileFound {
			file.Fix = "create it, or leave out --config to use " + config.File("", func(string) string { return "" })
		}
	case l.FileFound:
		file.Detail = l.File + ": " + strings.Join(layers, ", ")
	default:
		file.Detail = "none at " + l.File + " (built-in defaults): " + strings.Join(layers, ", ")
	}
	checks = append(checks, file)
	for _, p := range l.Problems {
		if p == l.FileErr {
			continue
		}
		checks = append(checks, Check{Name: "setting", Status: Fail, Detail: excerpt.FirstLine(p.Error()), Fix: settingFix(l, p.Error())})
	}
	return checks
}

// settingFix says where to change a value lore refused: the message
// starts with the variable, the flag or the key.
func settingFix(l config.Loaded, msg string) string {
	first, _, _ := strings.Cut(msg, ":")
	switch {
	case strings.HasPrefix(first, "--"):
		return "correct the flag " + first
	case strings.HasPrefix(first, "LORE_") || first == "OLLAMA_HOST" || first == "TAVILY_API_KEY":
		return "correct or unset " + first
	}
	src, ok := l.Origins[first]
	if !ok {
		return "see docs/configuration.md for the values lore takes"
	}
	switch src.Origin {
	case config.FromFile:
		return "change " + first + " in " + l.File
	case config.FromEnv, config.FromFlag:
		return "change " + src.Name
	}
	return "set " + first + " in " + l.File
}
