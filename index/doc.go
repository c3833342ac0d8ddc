// Package index is the seam between lore's engine and the stores that
// hold its indexes, and the one build pipeline that writes them.
//
// The map, one package per concern, arrows pointing one way (asserted by
// internal/arrows):
//
//	index/ingest     walk the sources, read files (bounded), load each
//	                 format, cut it into Chunks with line ranges
//	index/analysis   the one analyser: words, stems, identifier parts,
//	                 query terms, coverage
//	index            this package: the seam (Store, Reader, Target,
//	                 Writer in seam.go), its vocabulary (types.go,
//	                 errors.go), BuildTo (build.go: hashes, deletions,
//	                 the embedder guardrails, resume), Search, FuseRRF,
//	                 and what every store does alike (shared.go)
//	index/bm25       keyword postings, top-k, proximity (imports analysis)
//	index/hnsw       the vector graph
//	index/local      the SQLite store: generations, locks, keyword
//	                 segments, vectors and the graph feeder, damage
//	index/weaviatestore  the same seam on a Weaviate cluster
//
// ingest and analysis import nothing of lore; index imports ingest; each
// store imports index, ingest and analysis, never another store; nothing
// here imports the engine (package app), which is the only package that
// opens a store.
//
// A build: BuildTo asks a Target for a Writer, walks the sources
// (ingest.WalkRoots), compares each file with the Writer's DocState,
// loads and chunks the changed ones on parallel workers, where the
// store's Writer.Prepare turns chunks into its own form, embeds only the
// chunk hashes the store has no vector for, writes each group of files
// (a reader sees a file before or after, never half), removes what is
// gone, and Publishes. A search: Search embeds the query once and calls
// Reader.SearchVector, which each store answers with keyword and vector
// candidates fused by FuseRRF or its own fusion.
package index
