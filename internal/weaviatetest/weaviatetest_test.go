package weaviatetest

import (
	"net/http"
	"strconv"
	"syscall"
	"testing"
)

// A single node starts, answers, is killed and restarted on its ports
// and data, and nothing is left running once the test ends.
func TestSingleNodeLifecycle(t *testing.T) {
	var pids []int
	t.Run("cluster", func(t *testing.T) {
		c := Start(t, 1)
		if code, err := get(c.Endpoints()[0]+"/v1/meta", nil); code != http.StatusOK {
			t.Fatalf("/v1/meta: %d %v", code, err)
		}
		if got := c.GRPCEndpoints()[0]; got != "127.0.0.1:"+strconv.Itoa(c.port(0, offGRPC)) {
			t.Errorf("gRPC endpoint %s", got)
		}
		pids = append(pids, c.nodes[0].cmd.Process.Pid)
		c.Kill(0)
		if code, _ := get(c.Endpoints()[0]+"/v1/.well-known/ready", nil); code == http.StatusOK {
			t.Fatal("a killed node still answers")
		}
		c.Start(0)
		c.WaitHealthy(1)
		pids = append(pids, c.nodes[0].cmd.Process.Pid)
	})
	for _, pid := range pids {
		// Signal 0 only checks that the process exists.
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("pid %d still running after the test", pid)
		}
	}
}

func TestMissingBinarySkips(t *testing.T) {
	t.Setenv("LORE_WEAVIATE_BIN", "/nonexistent/weaviate-server")
	t.Setenv("LORE_REQUIRE_WEAVIATE", "")
	skipped := false
	t.Run("start", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Start(t, 1)
	})
	if !skipped {
		t.Error("Start did not skip without the binary")
	}
}
