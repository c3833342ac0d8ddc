package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCmd(streams *ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print lore's version",
		Example: "  lore version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(streams.Out, versionLine())
			return nil
		},
	}
}

// versionLine is what `lore version`, `lore --version` and `lore -V` print.
func versionLine() string {
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
	}
	return fmt.Sprintf("lore %s%s (%s, %s/%s)", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
