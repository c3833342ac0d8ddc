// Package weaviatetest runs a real Weaviate cluster (1 or 3 nodes) on
// 127.0.0.1 for tests, from the server binary `make weaviate` builds. It
// does in Go what scripts/weaviate-lib.sh does in shell (the notes beside
// it explain the variables and the pitfalls), so that go test can kill and
// restart nodes and always stops what it started.
package weaviatetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timeouts of a cluster's life. A node is ready in about 7 s on the
// 2-core development machine; 120 s leaves room for a loaded CI host.
const (
	startTimeout = 120 * time.Second
	stopTimeout  = 20 * time.Second
)

// portsPerNode are the ports of one node, at these offsets of its block:
// HTTP, gRPC, gossip, data (gossip+1), Raft and Raft's RPC (Raft+1: with
// CLUSTER_IN_LOCALHOST the server derives a peer's RPC port as its Raft
// port plus one, whatever RAFT_INTERNAL_RPC_PORT says).
const (
	offHTTP = iota
	offGRPC
	offGossip
	offData
	offRaft
	offRPC
	portsPerNode
)

// Cluster is a running Weaviate cluster. Its methods fail the test (never
// return errors): a harness that cannot start a node has nothing to test.
type Cluster struct {
	t     testing.TB
	bin   string
	dir   string
	base  int
	nodes []*node
}

type node struct {
	i    int
	dir  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been waited for
	log  *os.File
}

// Binary is the server binary the tests run: $LORE_WEAVIATE_BIN, else
// .cache/weaviate/bin/weaviate-server under the module root.
func Binary() (string, error) {
	if b := os.Getenv("LORE_WEAVIATE_BIN"); b != "" {
		return b, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "weaviate", "bin", "weaviate-server"), nil
}

// moduleRoot walks up from the working directory (a test runs in its
// package's folder) to the folder holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Start starts n nodes (1 or 3) and waits until every one is ready and
// the cluster lists all n HEALTHY. It skips the test when the binary is
// not built, unless LORE_REQUIRE_WEAVIATE=1 (CI that built it) makes that
// a failure. Every node is stopped when the test ends.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	bin, err := Binary()
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		const msg = "weaviate-server not built: run `make weaviate`"
		if os.Getenv("LORE_REQUIRE_WEAVIATE") == "1" {
			t.Fatalf("%s (%v)", msg, err)
		}
		t.Skip(msg)
	}
	if n < 1 {
		t.Fatalf("weaviatetest: %d nodes", n)
	}
	begin := time.Now()
	c := &Cluster{t: t, bin: bin, dir: t.TempDir()}
	// Registered before the first node starts, so that a failed start
	// still stops whatever did start.
	t.Cleanup(c.stopAll)
	c.base = freeBlock(t, n*portsPerNode)
	for i := range n {
		c.nodes = append(c.nodes, &node{i: i, dir: filepath.Join(c.dir, fmt.Sprintf("weaviate-%d", i))})
	}
	// Together: with RAFT_BOOTSTRAP_EXPECT=n no node elects a leader
	// until all n are up.
	for i := range n {
		c.start(i)
	}
	for i := range n {
		c.waitReady(i)
	}
	c.WaitHealthy(n)
	t.Logf("weaviatetest: %d nodes HEALTHY in %s", n, time.Since(begin).Round(time.Millisecond))
	return c
}

func (c *Cluster) port(i, off int) int { return c.base + portsPerNode*i + off }

// Endpoints are the nodes' HTTP addresses, "http://127.0.0.1:P".
func (c *Cluster) Endpoints() []string {
	out := make([]string, len(c.nodes))
	for i := range c.nodes {
		out[i] = "http://127.0.0.1:" + strconv.Itoa(c.port(i, offHTTP))
	}
	return out
}

// GRPCEndpoints are the nodes' gRPC addresses, "127.0.0.1:P".
func (c *Cluster) GRPCEndpoints() []string {
	out := make([]string, len(c.nodes))
	for i := range c.nodes {
		out[i] = "127.0.0.1:" + strconv.Itoa(c.port(i, offGRPC))
	}
	return out
}

// Log is the path of node i's log file.
func (c *Cluster) Log(i int) string { return filepath.Join(c.nodes[i].dir, "log") }

// DataDir is node i's data folder (PERSISTENCE_DATA_PATH).
func (c *Cluster) DataDir(i int) string { return filepath.Join(c.nodes[i].dir, "data") }

// RSSMiB is node i's resident memory now, 0 when it is not running.
func (c *Cluster) RSSMiB(i int) float64 {
	nd := c.nodes[i]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", nd.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// Leader is the index of the node the cluster says leads Raft, -1 when
// no live node answers.
func (c *Cluster) Leader() int {
	for i := range c.nodes {
		var st struct {
			Statistics []struct {
				LeaderID string `json:"leaderId"`
			} `json:"statistics"`
		}
		if code, err := get(c.Endpoints()[i]+"/v1/cluster/statistics", &st); err != nil || code != 200 {
			continue
		}
		for _, s := range st.Statistics {
			if n, err := strconv.Atoi(strings.TrimPrefix(s.LeaderID, "node")); err == nil && strings.HasPrefix(s.LeaderID, "node") {
				return n
			}
		}
	}
	return -1
}

// Kill sends SIGKILL to node i's process group (a crash: no shutdown) and
// waits until it is gone.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return
	}
	syscall.Kill(-nd.cmd.Process.Pid, syscall.SIGKILL)
	<-nd.done
	nd.cmd = nil
}

// Start restarts node i, killed or stopped before, with its data folder
// and ports, and waits until it is ready (not until the cluster sees it:
// WaitHealthy does that).
func (c *Cluster) Start(i int) {
	c.t.Helper()
	c.start(i)
	c.waitReady(i)
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd != nil {
		c.t.Fatalf("weaviatetest: node%d is running", i)
	}
	if err := os.MkdirAll(filepath.Join(nd.dir, "data"), 0o755); err != nil {
		c.t.Fatal(err)
	}
	var raftJoin, clusterJoin []string
	for j := range c.nodes {
		raftJoin = append(raftJoin, fmt.Sprintf("node%d:%d", j, c.port(j, offRaft)))
		if j != i {
			clusterJoin = append(clusterJoin, fmt.Sprintf("127.0.0.1:%d", c.port(j, offGossip)))
		}
	}
	logf, err := os.OpenFile(filepath.Join(nd.dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(c.bin, "--scheme", "http", "--host", "127.0.0.1", "--port", strconv.Itoa(c.port(i, offHTTP)))
	cmd.Env = append(os.Environ(),
		"PERSISTENCE_DATA_PATH="+filepath.Join(nd.dir, "data"),
		"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true",
		"DEFAULT_VECTORIZER_MODULE=none", "ENABLE_MODULES=",
		// Telemetry is on unless disabled (it reports usage and probes
		// cloud metadata endpoints); pprof listens on 6060 for every node
		// unless disabled, and three nodes on one host would collide.
		"DISABLE_TELEMETRY=true", "GO_PROFILING_DISABLE=true", "PROMETHEUS_MONITORING_ENABLED=false",
		fmt.Sprintf("CLUSTER_HOSTNAME=node%d", i), "CLUSTER_IN_LOCALHOST=true",
		"CLUSTER_ADVERTISE_ADDR=127.0.0.1", "CLUSTER_BIND_ADDR=127.0.0.1",
		"CLUSTER_GOSSIP_BIND_PORT="+strconv.Itoa(c.port(i, offGossip)),
		"CLUSTER_DATA_BIND_PORT="+strconv.Itoa(c.port(i, offData)),
		"CLUSTER_JOIN="+strings.Join(clusterJoin, ","),
		"RAFT_PORT="+strconv.Itoa(c.port(i, offRaft)),
		"RAFT_INTERNAL_RPC_PORT="+strconv.Itoa(c.port(i, offRPC)),
		"RAFT_JOIN="+strings.Join(raftJoin, ","),
		"RAFT_BOOTSTRAP_EXPECT="+strconv.Itoa(len(c.nodes)),
		"GRPC_PORT="+strconv.Itoa(c.port(i, offGRPC)),
		"COLLECTION_RETRIEVAL_STRATEGY=LocalOnly",
		"LOG_LEVEL=info",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	// A process group of its own: a signal to -pid reaches the server
	// and anything it starts, and go test's own signals do not.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		c.t.Fatalf("weaviatetest: start node%d: %v", i, err)
	}
	nd.cmd, nd.log, nd.done = cmd, logf, make(chan struct{})
	done := nd.done
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
}

// waitReady waits for node i's /v1/.well-known/ready.
func (c *Cluster) waitReady(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	nd.mu.Lock()
	done := nd.done
	nd.mu.Unlock()
	url := c.Endpoints()[i] + "/v1/.well-known/ready"
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		if code, _ := get(url, nil); code == http.StatusOK {
			return
		}
		select {
		case <-done:
			c.t.Fatalf("weaviatetest: node%d exited before it was ready; its log ends:\n%s", i, c.tail(i))
		case <-time.After(200 * time.Millisecond):
		}
	}
	c.t.Fatalf("weaviatetest: node%d not ready after %s; its log ends:\n%s", i, startTimeout, c.tail(i))
}

// WaitHealthy waits until a running node lists n HEALTHY nodes (a killed
// one may still be listed, as UNHEALTHY, or already dropped).
func (c *Cluster) WaitHealthy(n int) {
	c.t.Helper()
	deadline := time.Now().Add(startTimeout)
	last := "no node answered"
	for time.Now().Before(deadline) {
		for i, nd := range c.nodes {
			nd.mu.Lock()
			running := nd.cmd != nil
			nd.mu.Unlock()
			if !running {
				continue
			}
			var resp struct {
				Nodes []struct{ Name, Status string } `json:"nodes"`
			}
			if code, err := get(c.Endpoints()[i]+"/v1/nodes", &resp); code != http.StatusOK || err != nil {
				continue
			}
			healthy, states := 0, []string{}
			for _, s := range resp.Nodes {
				states = append(states, s.Name+"="+s.Status)
				if s.Status == "HEALTHY" {
					healthy++
				}
			}
			if healthy == n {
				return
			}
			last = strings.Join(states, " ")
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	c.t.Fatalf("weaviatetest: %d nodes not HEALTHY after %s (%s)", n, startTimeout, last)
}

// get fetches url, decoding a JSON body into out when it is not nil.
func get(url string, out any) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out != nil {
		err = json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(out) // a node's status: small
	}
	return resp.StatusCode, err
}

// tail is the end of node i's log, for a failure message.
func (c *Cluster) tail(i int) string {
	b, _ := os.ReadFile(c.Log(i))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(bytes.TrimSpace(b))
}

// stopAll sends SIGTERM to every running node's process group, then
// SIGKILL to those still running after stopTimeout, and waits for all:
// nothing started here outlives the test.
func (c *Cluster) stopAll() {
	start := time.Now()
	defer func() { c.t.Logf("weaviatetest: stopped in %s", time.Since(start).Round(time.Millisecond)) }()
	var running []*node
	for _, nd := range c.nodes {
		nd.mu.Lock()
		if nd.cmd != nil {
			syscall.Kill(-nd.cmd.Process.Pid, syscall.SIGTERM)
			running = append(running, nd)
		}
		nd.mu.Unlock()
	}
	deadline := time.Now().Add(stopTimeout)
	for _, nd := range running {
		select {
		case <-nd.done:
		case <-time.After(time.Until(deadline)):
			c.t.Logf("weaviatetest: node%d ignored SIGTERM for %s: SIGKILL", nd.i, stopTimeout)
			syscall.Kill(-nd.cmd.Process.Pid, syscall.SIGKILL)
			<-nd.done
		}
		nd.mu.Lock()
		nd.cmd = nil
		nd.mu.Unlock()
	}
}

// freeBlock finds a port P such that P..P+n-1 are free on 127.0.0.1 for
// both TCP and UDP (memberlist gossips over both), below the kernel's
// ephemeral range: a node killed and started again must get its ports
// back, and an outgoing connection made meanwhile (lore's, another
// node's) takes its local port from that range (a restart failed with
// "bind: address already in use" when the block lay inside it). Another
// process may still bind one first; the block is random, so that is rare,
// and a node that cannot bind fails its start loudly.
func freeBlock(t testing.TB, n int) int {
	t.Helper()
	top := ephemeralLow() - n
	for range 200 {
		base := 10000 + rand.IntN(top-10000)
		if blockFree(base, n) {
			return base
		}
	}
	t.Fatalf("weaviatetest: no free block of %d ports on 127.0.0.1", n)
	return 0
}

// ephemeralLow is where the kernel's range of local ports for outgoing
// connections begins (Linux's default when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		if low, err := strconv.Atoi(f[0]); err == nil && low > 12000 {
			return low
		}
	}
	return 32768
}

func blockFree(base, n int) bool {
	var closers []func() error
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for p := base; p < base+n; p++ {
		addr := "127.0.0.1:" + strconv.Itoa(p)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		closers = append(closers, l.Close)
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		closers = append(closers, u.Close)
	}
	return true
}
