package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..." (make
// build). `go install` sets no ldflags: the module version then comes from
// the build info the Go toolchain records.
var version = "dev"

func newVersionCmd(streams *ioStreams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print lore's version",
		Long: `Print lore's version: the release (or the module version go install
recorded), the commit it was built from, and the Go toolchain.`,
		Example: `  lore version
  lore version --json | jq -r .revision`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := currentVersion()
			if asJSON {
				return writeJSON(streams.Out, v)
			}
			fmt.Fprintln(streams.Out, v.line())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
	return cmd
}

// versionInfo is what `lore version --json` prints.
type versionInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision"` // the full commit hash, "" when not built from a checkout
	Modified bool   `json:"modified"` // built with uncommitted changes
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	time     string // the commit's time (vcs.time)
}

func currentVersion() versionInfo {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(version, bi)
}

// versionOf is lore's version from the ldflags version and the build info
// (nil when the binary has none).
func versionOf(ldflags string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: ldflags, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi == nil {
		return v
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	if v.Version == "dev" && bi.Main.Version != "" {
		v.Version = bi.Main.Version // v1.2.3, a pseudo-version, or (devel)
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "vcs.time":
			v.time = s.Value
		}
	}
	return v
}

// line is what `lore version`, `lore --version` and `lore -V` print:
//
//	lore v1.2.3 (commit 3f9a1c0e2b7d-dirty, 2026-11-25T16:28:09Z; go1.26.0 linux/amd64)
func (v versionInfo) line() string {
	var vcs []string
	if v.Revision != "" {
		rev := "commit " + v.Revision[:min(12, len(v.Revision))]
		if v.Modified {
			rev += "-dirty"
		}
		vcs = append(vcs, rev)
	}
	if v.time != "" {
		vcs = append(vcs, v.time)
	}
	build := fmt.Sprintf("%s %s/%s", v.Go, v.OS, v.Arch)
	if len(vcs) > 0 {
		build = strings.Join(vcs, ", ") + "; " + build
	}
	return fmt.Sprintf("lore %s (%s)", v.Version, build)
}
