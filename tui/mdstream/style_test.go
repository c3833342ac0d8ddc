package mdstream

import (
	"os"
	"os/exec"
	"sync"
	"testing"
)

// TestFirstRendersInParallel highlights code in several styles at once in a
// fresh process, as the chat's stream and a re-render after /theme can: the
// first use of each theme must not race chroma's unlocked reads of its theme
// registry. Only a race-enabled build (make test) can see the race; it has to
// be a fresh process because every theme is registered once per process.
func TestFirstRendersInParallel(t *testing.T) {
	const child = "LORE_MDSTREAM_FIRST_RENDERS"
	if os.Getenv(child) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFirstRendersInParallel$", "-test.count=1")
		cmd.Env = append(os.Environ(), child+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("rendering in a fresh process: %v\n%s", err, out)
		}
		return
	}
	md := "Run it:\n\n```go\nfunc main() { println(\"hi\") } // done\n```\n"
	var wg sync.WaitGroup
	for _, style := range []string{"dark", "light", "dracula", "tokyo-night"} {
		wg.Go(func() {
			if _, err := Full(Options{Style: style, Width: 60}, md); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
