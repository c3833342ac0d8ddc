package clipboard

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOSC52(t *testing.T) {
	text := "go func() {}\n// ünïcode"
	b64 := base64.StdEncoding.EncodeToString([]byte(text))
	if got := OSC52(text, false); got != "\x1b]52;c;"+b64+"\a" {
		t.Fatalf("plain: %q", got)
	}
	got := OSC52(text, true)
	if !strings.HasPrefix(got, "\x1b]52;c;"+b64+"\a") || !strings.Contains(got, "\x1bPtmux;\x1b\x1b]52;c;"+b64+"\a\x1b\\") {
		t.Fatalf("tmux: %q", got)
	}
}

func TestSystemWithoutDisplay(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no clipboard program anywhere
	if _, err := System("x", func(string) string { return "" }); !errors.Is(err, ErrNoTool) {
		t.Fatalf("want ErrNoTool, got %v", err)
	}
}

func TestTool(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	os.WriteFile(filepath.Join(bin, "xclip"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := Tool(getenv); got != "" {
		t.Errorf("without DISPLAY: %q", got)
	}
	env["DISPLAY"] = ":0"
	if got := Tool(getenv); got != "xclip" {
		t.Errorf("with DISPLAY: %q", got)
	}
	if got, err := System("x", getenv); got != "xclip" || err != nil {
		t.Errorf("System: %q %v", got, err)
	}
}
