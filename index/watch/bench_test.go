package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWatcherIdle50k is what watching costs while nothing changes:
// a tree of 50,000 files in 5,000 folders is watched by events, then by
// polling (the fallback past the OS's watch limit). It reports the time to
// start, the memory and file descriptors the watcher holds, and the CPU
// it uses over an idle window (LORE_BENCH_IDLE seconds each, default 60).
func BenchmarkWatcherIdle50k(b *testing.B) {
	idle := 60 * time.Second
	if s := os.Getenv("LORE_BENCH_IDLE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("LORE_BENCH_IDLE=%q: %v", s, err)
		}
		idle = time.Duration(n) * time.Second
	}
	root := b.TempDir()
	for d := range 5000 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", d/100), fmt.Sprintf("s%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 10 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.md", f)), []byte("# Note\n\nsome text\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for range b.N {
		for _, mode := range []struct {
			name string
			poll string
			idle time.Duration
		}{{"events", "", idle}, {"polling", "benchmark", idle}} {
			ctx, cancel := context.WithCancel(context.Background())
			runtime.GC()
			rss0, fds0, heap0 := rssKiB(b), fds(b), heapInuse()
			start := time.Now()
			w, err := New(ctx, Options{Roots: []string{root}, ForcePoll: mode.poll})
			if err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			runtime.GC()
			rss1, fds1, heap1 := rssKiB(b), fds(b), heapInuse()
			cpu0 := cpuTime()
			batches := 0
			for deadline := time.After(mode.idle); ; {
				select {
				case <-w.Batches():
					batches++
					continue
				case <-deadline:
				}
				break
			}
			cpu := cpuTime() - cpu0
			w.Close()
			cancel()
			fmt.Printf("    %s: %d folders watched, started in %v; +%.1f MiB heap held, +%.1f MiB RSS, +%d fds; %.0f ms CPU over %v idle (%.2f%% of a core), %d batches\n",
				mode.name, w.Watched(), took.Round(time.Millisecond), float64(heap1-heap0)/(1<<20), float64(rss1-rss0)/1024, fds1-fds0,
				float64(cpu)/float64(time.Millisecond), mode.idle, 100*float64(cpu)/float64(mode.idle), batches)
			b.ReportMetric(float64(took)/float64(time.Millisecond), mode.name+"-start-ms")
			b.ReportMetric(float64(heap1-heap0)/(1<<20), mode.name+"-heap-MiB")
			b.ReportMetric(float64(rss1-rss0)/1024, mode.name+"-rss-MiB")
			b.ReportMetric(float64(fds1-fds0), mode.name+"-fds")
			b.ReportMetric(float64(cpu)/float64(time.Millisecond), mode.name+"-idle-cpu-ms")
		}
	}
}

// rssKiB is the process's resident memory (VmRSS).
func rssKiB(b *testing.B) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// heapInuse is the Go heap in use.
func heapInuse() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// fds counts the process's open file descriptors.
func fds(b *testing.B) int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Skip("no /proc/self/fd")
	}
	return len(es)
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
