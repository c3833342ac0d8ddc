package analysis

import (
	"hash/maphash"
	"strings"
	"sync"
)

// analysis is what one field of a chunk becomes: its term ("" for none)
// and its camelCase parts, each with PartPrefix.
type analysis struct {
	term  string
	parts []string
}

// fieldCache remembers the analysis of the fields seen lately. Code says
// the same identifiers over and over, and folding, stemming and splitting
// each occurrence anew was most of an index build's analysis time (the
// camelCase parts alone added a quarter to a build of Go's source tree).
// It is bounded: a shard that fills is emptied, so a corpus of endless
// distinct words costs a little speed, never memory.
var fieldCache = newShardedCache()

const (
	cacheShards   = 16
	cacheShardCap = 4096 // fields per shard: 64k in all, about 10 MiB
)

type shardedCache struct {
	seed   maphash.Seed
	shards [cacheShards]struct {
		sync.Mutex
		m map[string]analysis
	}
}

func newShardedCache() *shardedCache {
	c := &shardedCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m = make(map[string]analysis)
	}
	return c
}

// analyzeField is word and Parts of field w, from the cache when it can.
func analyzeField(w string) analysis {
	if len(w) > 64 {
		return analyzeFieldNow(w) // hashes and blobs: rarely repeated, not worth keeping
	}
	sh := &fieldCache.shards[maphash.String(fieldCache.seed, w)%cacheShards]
	sh.Lock()
	a, ok := sh.m[w]
	sh.Unlock()
	if ok {
		return a
	}
	a = analyzeFieldNow(w)
	sh.Lock()
	if len(sh.m) >= cacheShardCap {
		clear(sh.m)
	}
	// A clone: w is a slice of the chunk's text, which must not be kept
	// alive by the cache.
	sh.m[strings.Clone(w)] = a
	sh.Unlock()
	return a
}

func analyzeFieldNow(w string) analysis {
	var a analysis
	Word(w, func(t string) { a.term = t })
	Parts(w, func(t string) { a.parts = append(a.parts, PartPrefix+t) })
	return a
}
