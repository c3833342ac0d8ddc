package main

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified, time string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "-compiler", Value: "gc"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: time}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "067030b76082746f60c076d43b591aec72e654da"
	tests := []struct {
		name    string
		ldflags string
		bi      *debug.BuildInfo
		want    string
	}{
		{"go install of a release: the module version, no checkout",
			"dev", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/lore-cli/lore", Version: "v1.2.3"}},
			"lore v1.2.3 (go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH + ")"},
		{"go build in a clean checkout",
			"dev", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false", "2026-11-25T16:28:09Z")},
			"lore (devel) (commit 067030b76082, 2026-11-25T16:28:09Z; go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH + ")"},
		{"go build with uncommitted changes",
			"dev", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true", "2026-11-25T16:28:09Z")},
			"lore (devel) (commit 067030b76082-dirty, 2026-11-25T16:28:09Z; go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH + ")"},
		{"make build: ldflags win over the module version",
			"v1.2.3-4-g067030b", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false", "2026-11-25T16:28:09Z")},
			"lore v1.2.3-4-g067030b (commit 067030b76082, 2026-11-25T16:28:09Z; go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH + ")"},
		{"no build info at all",
			"dev", nil,
			"lore dev (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.ldflags, tt.bi).line(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	v := versionOf("dev", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true", "2026-11-25T16:28:09Z")})
	if v.Revision != rev || !v.Modified || v.Version != "(devel)" {
		t.Errorf("versionOf: %+v", v)
	}
}

func TestVersionJSON(t *testing.T) {
	e := newEnv(t)
	r := e.run(false, "version", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	for _, k := range []string{"version", "revision", "modified", "go", "os", "arch"} {
		if _, ok := v[k]; !ok {
			t.Errorf("lacks %q: %s", k, r.stdout)
		}
	}
	if len(v) != 6 || v["os"] != runtime.GOOS || v["arch"] != runtime.GOARCH || !strings.HasPrefix(v["go"].(string), "go") {
		t.Errorf("version --json: %s", r.stdout)
	}
	// The test binary has build info: its version is never the bare
	// ldflags default.
	if v["version"] == "dev" {
		t.Errorf("version is %q: the build info was not read", v["version"])
	}
}
