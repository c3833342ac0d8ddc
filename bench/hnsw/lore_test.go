package hnsw

import "github.com/lore-cli/lore/index/hnsw"

func init() {
	libraries = append([]library{{"lore", newLore}}, libraries...)
}

type loreGraph struct{ g *hnsw.Graph }

func newLore(dim int) ann {
	return loreGraph{hnsw.New(dim, hnsw.Options{M: m, EfConstruction: efConstruction})}
}

func (l loreGraph) add(key int64, v []float32) {
	if err := l.g.Add(key, v); err != nil {
		panic(err)
	}
}

func (l loreGraph) search(q []float32, k, ef int) []int64 {
	hits, err := l.g.Search(q, k, ef)
	if err != nil {
		panic(err)
	}
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.Key
	}
	return out
}
