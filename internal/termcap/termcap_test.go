package termcap

import (
	"strings"
	"testing"
)

func TestHyperlinks(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want Support
		why  string
	}{
		{map[string]string{"TERM": "dumb", "TERM_PROGRAM": "WezTerm"}, No, "TERM=dumb"},
		{map[string]string{"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}, Yes, "TERM_PROGRAM=WezTerm"},
		{map[string]string{"TERM": "xterm-256color", "VTE_VERSION": "7600"}, Yes, "VTE_VERSION=7600"},
		{map[string]string{"TERM": "xterm-256color", "VTE_VERSION": "4800"}, No, "before 0.50"},
		{map[string]string{"TERM": "xterm-256color", "WT_SESSION": "x"}, Yes, "Windows Terminal"},
		{map[string]string{"TERM": "xterm-kitty", "TMUX": "/tmp/tmux-0/default,1,0"}, Yes, "inside tmux"},
		{map[string]string{"TERM": "xterm-256color"}, Unknown, "not recognised"},
	} {
		got, why := Hyperlinks(func(k string) string { return tt.env[k] })
		if got != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%v: %v %q, want %v %q", tt.env, got, why, tt.want, tt.why)
		}
	}
}
