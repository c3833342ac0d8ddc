// Command mcpflood measures how `lore mcp --http` holds up against two
// floods on loopback, for issue 35: connections that announce a body and
// never send it, and initialize calls that never go further. It starts the
// lore binary it is given on 127.0.0.1 (its data in a temporary folder,
// a keyword-only index of docs/), reads the server's fds, RSS and lore.log
// size from /proc and the file system, and stops the server by its PID.
// Everything it opens is bounded in count and in time.
//
//	go run ./scripts/mcpflood -lore bin/lore -flood body -n 1000 -hold 100s
//	go run ./scripts/mcpflood -lore bin/lore -flood body -n 300 -hold 70s -token t0ken
//	go run ./scripts/mcpflood -lore bin/lore -flood init -n 25000
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	lore := flag.String("lore", "bin/lore", "the lore binary")
	flood := flag.String("flood", "body", "body: connections that never send their body; init: initialize calls")
	n := flag.Int("n", 1000, "connections or calls (at most 30000)")
	hold := flag.Duration("hold", 100*time.Second, "body: how long each connection waits for the server (at most 5m)")
	token := flag.String("token", "", "serve-token for the server; the flood sends none")
	docs := flag.String("docs", "docs", "folder to index")
	flag.Parse()
	if *n < 1 || *n > 30000 || *hold > 5*time.Minute {
		log.Fatal("-n is 1..30000 and -hold at most 5m")
	}
	dir, err := os.MkdirTemp("", "mcpflood")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	env := append(os.Environ(), "XDG_DATA_HOME="+dir+"/data", "XDG_STATE_HOME="+dir+"/state", "XDG_CONFIG_HOME="+dir+"/config", "LORE_SERVE_TOKEN="+*token)
	idx := exec.Command(*lore, "index", "--embedder", "none", *docs)
	idx.Env = env
	if out, err := idx.CombinedOutput(); err != nil {
		log.Fatalf("index: %v: %s", err, out)
	}
	srv := exec.Command(*lore, "mcp", "--http", "127.0.0.1:0")
	srv.Env = env
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		log.Fatal(err)
	}
	pid := srv.Process.Pid
	defer func() {
		srv.Process.Signal(syscall.SIGTERM) // the server this command started, by its PID
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			srv.Process.Kill()
		}
	}()
	addr := listening(stderr)
	if h, _, _ := net.SplitHostPort(addr); h != "127.0.0.1" {
		log.Fatalf("%s is not loopback", addr)
	}
	logPath := filepath.Join(dir, "state", "lore", "lore.log")
	time.Sleep(200 * time.Millisecond)
	report := func(when string) {
		fmt.Printf("%-28s fds %5d  rss %6.1f MB  lore.log %8d bytes\n", when, fds(pid), rss(pid), size(logPath)+size(logPath+".1"))
	}
	report("start")
	switch *flood {
	case "body":
		bodyFlood(addr, *n, *hold, report)
	case "init":
		initFlood(addr, *n)
	default:
		log.Fatalf("-flood %s: body or init", *flood)
	}
	report("end")
}

// listening is the address from the server's "listening" log line.
func listening(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var l struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "listening" {
			go io.Copy(io.Discard, r)
			return strings.TrimSuffix(strings.TrimPrefix(l.Addr, "http://"), "/mcp")
		}
	}
	log.Fatal("the server did not say where it listens")
	return ""
}

// bodyFlood opens n connections that send the headers of a POST /mcp
// with Content-Length: 1000 and no body, and waits up to hold for each
// to be answered or closed.
func bodyFlood(addr string, n int, hold time.Duration, report func(string)) {
	var answered, closed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	var mu sync.Mutex
	var lastClose time.Duration
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			log.Printf("dial: %v", err)
			continue
		}
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n", addr)
		wg.Go(func() {
			defer c.Close()
			c.SetReadDeadline(start.Add(hold))
			b := make([]byte, 4096)
			for {
				k, err := c.Read(b)
				if k > 0 && strings.HasPrefix(string(b[:k]), "HTTP/1.1 ") {
					answered.Add(1)
				}
				if err != nil {
					if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
						closed.Add(1)
						mu.Lock()
						lastClose = max(lastClose, time.Since(start))
						mu.Unlock()
					}
					return
				}
			}
		})
	}
	time.Sleep(2 * time.Second)
	report(fmt.Sprintf("%d connections opened", n))
	wg.Wait()
	fmt.Printf("after %s: %d answered, %d closed by the server (the last at %s), %d still open at the end\n",
		time.Since(start).Round(time.Second), answered.Load(), closed.Load(), lastClose.Round(100*time.Millisecond), int64(n)-closed.Load())
}

// initFlood sends n initialize calls, 8 at a time, each from a client
// that goes no further.
func initFlood(addr string, n int) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`
	status := map[int]int{}
	var mu sync.Mutex
	next := atomic.Int64{}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second}
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				code := 0
				if resp, err := client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					code = resp.StatusCode
				}
				mu.Lock()
				status[code]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Printf("%d initialize calls in %s: status %v\n", n, time.Since(start).Round(time.Second), status)
}

func fds(pid int) int {
	es, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(es)
}

func rss(pid int) float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			var kb float64
			fmt.Sscanf(strings.TrimPrefix(l, "VmRSS:"), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

func size(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}
