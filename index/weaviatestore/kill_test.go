package weaviatestore_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/index/ingest"
	"github.com/lore-cli/lore/index/local"
	"github.com/lore-cli/lore/index/weaviatestore"
	"github.com/lore-cli/lore/internal/benchdata"
	"github.com/lore-cli/lore/internal/weaviatetest"
	"github.com/lore-cli/lore/internal/wordvec"
)

// chunkSet is every chunk of an index as path:lines:hash, sorted: two
// stores hold the same chunks when their sets are equal.
func chunkSet(t *testing.T, st index.Store, name string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := st.Open(ctx, name)
	if err != nil {
		t.Fatalf("open %s on %s: %v", name, st.Kind(), err)
	}
	defer r.Close()
	hits, err := r.SampleChunks(ctx, 1<<30, 0, 1)
	if err != nil {
		t.Fatalf("read the chunks of %s on %s: %v", name, st.Kind(), err)
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		c := ingest.Chunk{Start: h.Start, End: h.End, Heading: h.Heading, Kind: h.Kind, Text: h.Text}
		out[i] = h.Path + ":" + c.Hash()
	}
	sort.Strings(out)
	return out
}

func equalSets(a, b []string) (missing, extra int) {
	in := map[string]int{}
	for _, s := range a {
		in[s]++
	}
	for _, s := range b {
		if in[s] > 0 {
			in[s]--
		} else {
			extra++
		}
	}
	for _, n := range in {
		missing += n
	}
	return missing, extra
}

// A 3-node cluster loses a follower and then the Raft leader to kill -9
// while lore indexes into it and searches it: the build completes (a
// rerun resumes it if the cluster refused a write meanwhile) with the
// same chunks, by path and hash, as the local store built from the same
// files; searches keep answering; each killed node rejoins and serves the
// chunks written while it was down.
func TestKillFollowerThenLeaderWhileIndexing(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node cluster: minutes")
	}
	c := weaviatetest.Start(t, 3)
	corpus := t.TempDir()
	if err := benchdata.WriteCorpus(corpus, 60, 40); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opt := index.BuildOptions{Name: "kills", Paths: []string{corpus}, Embedder: wordvec.Embedder{Dim: 64}, EmbedBatchSize: 64,
		Chunk: ingest.ChunkOptions{Size: 1500, Overlap: 200}, MaxFileSize: 4 << 20, Workers: 2}
	local := local.Store{Parent: t.TempDir()}
	if _, err := local.Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	want := chunkSet(t, local, "kills")

	st, err := weaviatestore.New(weaviatestore.Config{Endpoints: c.Endpoints(), GRPCEndpoints: c.GRPCEndpoints()})
	if err != nil {
		t.Fatal(err)
	}
	// A small first build, so that searches have an index to answer from
	// while the big one is written.
	seed := t.TempDir()
	if err := benchdata.WriteCorpus(seed, 2, 5); err != nil {
		t.Fatal(err)
	}
	seedOpt := opt
	seedOpt.Name, seedOpt.Paths = "seed", []string{seed}
	if _, err := st.Build(ctx, seedOpt); err != nil {
		t.Fatal(err)
	}

	// Searches all along, counted.
	var answered, failed atomic.Int64
	var lastErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			r, err := st.Open(sctx, "seed")
			if err == nil {
				var res index.Results
				res, err = r.SearchVector(sctx, "server request timeout", wordvec.Vector("server request timeout", 64), index.SearchOptions{Limit: 5}, 0)
				r.Close()
				if err == nil && len(res.Hits) == 0 {
					err = errors.New("no hits")
				}
			}
			cancel()
			if err != nil {
				failed.Add(1)
				lastErr.Store(err.Error())
			} else {
				answered.Add(1)
			}
		}
	})

	// The build, killed into twice: a follower once a fifth of the files
	// are done, the leader once the follower is back and half are. The
	// build waits at each mark until the kill is made, so the kills land
	// mid-build however fast this machine writes.
	type mark struct {
		share           float64
		reached, resume chan struct{}
		passed          bool
	}
	marks := []*mark{{share: 0.2}, {share: 0.5}}
	for _, m := range marks {
		m.reached, m.resume = make(chan struct{}), make(chan struct{})
	}
	bopt := opt
	bopt.Progress = func(p index.Progress) {
		for _, m := range marks {
			if !m.passed && p.Phase == "index" && p.Done >= m.share {
				m.passed = true
				m.reached <- struct{}{}
				<-m.resume
			}
		}
	}
	done := make(chan error, 1)
	build := func() { _, err := st.Build(ctx, bopt); done <- err }
	go build()
	runs := 1
	reach := func(m *mark) {
		for {
			select {
			case <-m.reached:
				return
			case err := <-done:
				// A write refused while the cluster was short of a node
				// stops the build; the rerun resumes, and the mark falls
				// within what is left.
				if err == nil || runs == 3 {
					t.Fatalf("the build ended before the kill at %.0f%% (run %d: %v)", m.share*100, runs, err)
				}
				t.Logf("run %d: %v", runs, err)
				runs++
				go build()
			}
		}
	}
	reach(marks[0])
	leader := c.Leader()
	follower := (leader + 1) % 3
	t.Logf("kill -9 follower node%d (leader node%d)", follower, leader)
	c.Kill(follower)
	close(marks[0].resume)
	time.Sleep(3 * time.Second)
	c.Start(follower)
	c.WaitHealthy(3)
	reach(marks[1])
	leader = c.Leader()
	t.Logf("kill -9 leader node%d", leader)
	c.Kill(leader)
	close(marks[1].resume)
	killed := []int{follower, leader}
	err = <-done
	// A write the cluster refused while it elected a leader, or a chunk
	// it took and lost, stops the build with a message that says so; a
	// rerun resumes (and writes again what was lost).
	for run := 2; err != nil; run++ {
		t.Logf("run %d: %v", run-1, err)
		if run > 3 {
			t.Fatalf("the build still fails after %d runs: %v", run-1, err)
		}
		_, err = st.Build(ctx, opt)
	}
	c.Start(leader)
	c.WaitHealthy(3)
	close(stop)
	wg.Wait()
	t.Logf("searches while killing: %d answered, %d failed (last: %v)", answered.Load(), failed.Load(), lastErr.Load())
	if answered.Load() == 0 || failed.Load() > answered.Load()/10 {
		t.Errorf("searches while killing: %d answered, %d failed (last: %v)", answered.Load(), failed.Load(), lastErr.Load())
	}

	all, err := weaviatestore.New(weaviatestore.Config{Endpoints: c.Endpoints(), GRPCEndpoints: c.GRPCEndpoints(), ReadConsistency: weaviatestore.All})
	if err != nil {
		t.Fatal(err)
	}
	// Listing all chunks reads one replica whatever the consistency (a
	// cursor), and a node back from the dead is repaired asynchronously:
	// the cluster converges to exactly the local store's chunks.
	rejoined := time.Now()
	for {
		got := chunkSet(t, all, "kills")
		missing, extra := equalSets(want, got)
		if missing+extra == 0 {
			t.Logf("%d chunks, the same paths and hashes as the local store (%v after the last node rejoined)", len(got), time.Since(rejoined).Round(time.Second))
			break
		}
		if time.Since(rejoined) > 2*time.Minute {
			t.Fatalf("two minutes after the kills the cluster holds %d chunks, the local store %d: %d missing, %d extra", len(got), len(want), missing, extra)
		}
		time.Sleep(2 * time.Second)
	}

	// Each killed node, asked alone, catches up with what was written
	// while it was down (asynchronous replication repairs it).
	for _, i := range killed {
		one, err := weaviatestore.New(weaviatestore.Config{Endpoints: c.Endpoints()[i : i+1], GRPCEndpoints: c.GRPCEndpoints()[i : i+1]})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			got := chunkSet(t, one, "kills")
			missing, extra := equalSets(want, got)
			if missing+extra == 0 {
				t.Logf("node%d alone serves all %d chunks", i, len(got))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node%d alone still misses %d chunks (%d extra) two minutes after it rejoined", i, missing, extra)
			}
			time.Sleep(2 * time.Second)
		}
	}
}
