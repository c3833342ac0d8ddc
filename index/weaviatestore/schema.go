package weaviatestore

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate/entities/models"
)

// prop is a property as lore creates it.
type prop struct {
	name, dataType, tokenization string
	indexed                      bool // filterable (and searchable for text)
}

// Numbers past 2^31 (chunk_id, doc_id) are text: GraphQL's Int is 32
// bits, and Weaviate answers such a value of an int property as null.
//
// Tokenization: text and heading by words (BM25 over prose); identifiers
// lowercased and split on whitespace only, so that the squashed forms
// (ollamahost, execlookpath, getuserbyid) match a query's whole; paths,
// kinds and hashes whole (filters). part_terms holds the camelCase parts
// of the chunk's identifiers (partToken), apart from its words, as the
// local postings keep them (analysis.PartPrefix).
var chunkProps = []prop{
	{"text", "text", "word", true},
	{"heading", "text", "word", true},
	{"identifiers", "text", "lowercase", true},
	{"terms", "text", "whitespace", true},
	{"heading_terms", "text", "whitespace", true},
	{"path_terms", "text", "whitespace", true},
	{"part_terms", "text", "whitespace", true},
	{"path", "text", "field", true},
	{"source", "text", "field", true},
	{"source_id", "int", "", true},
	{"doc_id", "text", "field", true},
	{"chunk_id", "text", "field", true},
	{"ord", "int", "", false},
	{"start_line", "int", "", true},
	{"end_line", "int", "", true},
	{"chars", "int", "", false},
	{"kind", "text", "field", true},
	{"hash", "text", "field", true},
	{"version", "text", "field", true},
}

// Numbers past 2^31 are text: GraphQL's Int is 32 bits, and Weaviate
// answers such a value of an int property as null (ids, sizes, times).
var docProps = []prop{
	{"doc_id", "text", "field", true},
	{"source_id", "int", "", true},
	{"path", "text", "field", true},
	{"size", "text", "field", false},
	{"mtime_ns", "text", "field", false},
	{"hash", "text", "field", false},
	{"status", "text", "field", true},
	{"reason", "text", "field", false},
	{"chunker", "text", "field", false},
	{"indexed_at", "text", "field", false},
	{"chunks", "int", "", false},
	{"version", "text", "field", false},
}

var vectorProps = []prop{{"hash", "text", "field", true}}

var metaProps = []prop{
	{"name", "text", "field", true},
	{"current", "text", "field", false},
	{"next", "text", "field", false},
	{"generations", "text", "field", false},
	{"remembered", "text", "field", false},
	{"lock_holder", "text", "field", false},
	{"lock_expires", "int", "", false},
}

func propsOf(kind string) []prop {
	switch kind {
	case kindChunks:
		return chunkProps
	case kindDocs:
		return docProps
	case kindVectors:
		return vectorProps
	case watchKind:
		return watchProps
	}
	return metaProps
}

// classDef is the collection lore creates for kind. Only Chunks has a
// vector index (HNSW, cosine, as lore's own graph); the others store no
// vector (Docs, Meta) or store it without indexing it (Vectors: skip).
// One shard: BM25 statistics are per shard, and with several the same
// query scored the same chunk differently from run to run; replication
// still puts a copy on `replication` nodes.
func classDef(name, kind string, replication int) *models.Class {
	c := &models.Class{
		Class:             name,
		Vectorizer:        "none",
		ReplicationConfig: &models.ReplicationConfig{Factor: int64(replication)},
		ShardingConfig:    map[string]any{"desiredCount": 1},
	}
	if kind == kindChunks {
		c.VectorIndexConfig = map[string]any{"distance": "cosine"}
	} else {
		c.VectorIndexConfig = map[string]any{"skip": true}
	}
	for _, p := range propsOf(kind) {
		indexed := p.indexed
		mp := &models.Property{Name: p.name, DataType: []string{p.dataType}, IndexFilterable: &indexed}
		if p.dataType == "text" {
			mp.Tokenization = p.tokenization
			searchable := indexed && kind == kindChunks // BM25 reads Chunks only
			mp.IndexSearchable = &searchable
		}
		c.Properties = append(c.Properties, mp)
	}
	return c
}

// getClass is the class as the cluster has it, nil when there is none.
func (s *Store) getClass(ctx context.Context, name string) (*models.Class, error) {
	var out *models.Class
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		cl, err := c.Schema().ClassGetter().WithClassName(name).Do(ctx)
		if statusCode(err) == http.StatusNotFound {
			out = nil
			return nil
		}
		out = cl
		return err
	})
	return out, err
}

// ensureClass creates the class unless it exists. A create that timed out
// on one node and is retried on another may find it made: that is fine.
func (s *Store) ensureClass(ctx context.Context, def *models.Class) error {
	have, err := s.getClass(ctx, def.Class)
	if err != nil || have != nil {
		return s.wrap(err, "read the schema")
	}
	err = s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		return c.Schema().ClassCreator().WithClass(def).Do(ctx)
	})
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "already exists") {
		err = nil
	}
	if err != nil {
		return s.wrap(err, "create collection "+def.Class)
	}
	s.setFactor(def.Class, int(def.ReplicationConfig.Factor))
	return s.waitKnown(ctx, def.Class)
}

// waitKnown waits until every node that answers can query a collection
// just created. Raft commits the create on a majority and each node
// applies it (and rebuilds its GraphQL schema) a moment later: a query or
// a batch that reaches a node before then fails with `Cannot query field`
// or "class not found" (1 fresh index in 20 on a 3-node cluster here).
// A node that does not answer is skipped: it catches up before it is
// ready again.
func (s *Store) waitKnown(ctx context.Context, class string) error {
	for _, ep := range s.pool.eps {
		nctx, cancel := context.WithTimeout(ctx, s.pool.timeout)
		err := s.knows(nctx, ep, class)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// knows waits, within ctx, until ep can query class; nil too when ep does
// not answer at all (each node has its own deadline: a dead or hung one
// must not use up the others').
func (s *Store) knows(ctx context.Context, ep *endpoint, class string) error {
	c, err := s.pool.client(ep)
	if err != nil || s.pool.ready(ctx, ep, c) != nil {
		return nil
	}
	sawNotYet := false
	for {
		resp, err := c.GraphQL().Get().WithClassName(class).WithFields(additional("id")).WithLimit(1).Do(ctx)
		if err == nil {
			err = decodeGQL(resp, "Get", &map[string]any{})
		}
		// Known to GraphQL first, then its shard loaded.
		notYet := isMissingClass(err) || err != nil && strings.Contains(err.Error(), "non-existing index")
		switch {
		case err == nil:
			return nil
		case notYet:
			sawNotYet = true
		case unreachable(err) && !sawNotYet:
			return nil
		case !unreachable(err):
			return s.wrap(err, "read collection "+class)
		}
		if sleep(ctx, 50*time.Millisecond) != nil || !notYet {
			return fmt.Errorf("weaviate: %s does not know collection %s %v after it was created: check the node's log and `lore doctor`", ep.url, class, s.pool.timeout)
		}
	}
}

func (s *Store) deleteClass(ctx context.Context, name string) error {
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		err := c.Schema().ClassDeleter().WithClassName(name).Do(ctx)
		if statusCode(err) == http.StatusNotFound {
			return nil
		}
		return err
	})
	s.mu.Lock()
	delete(s.factors, name)
	s.mu.Unlock()
	return s.wrap(err, "delete collection "+name)
}

// factor is the class's replication factor (read once per Store): a
// GraphQL Get takes a consistency level only on a replicated class.
func (s *Store) factor(ctx context.Context, class string) int {
	s.mu.Lock()
	f, ok := s.factors[class]
	s.mu.Unlock()
	if ok {
		return f
	}
	cl, err := s.getClass(ctx, class)
	if err != nil || cl == nil || cl.ReplicationConfig == nil {
		return 1
	}
	s.setFactor(class, int(cl.ReplicationConfig.Factor))
	return int(cl.ReplicationConfig.Factor)
}

func (s *Store) setFactor(class string, f int) {
	s.mu.Lock()
	s.factors[class] = f
	s.mu.Unlock()
}

// schemaProblems compares a class with what lore creates for kind: "" when
// it is as lore made it.
func schemaProblems(have *models.Class, kind string) string {
	var probs []string
	if have.Vectorizer != "none" && have.Vectorizer != "" {
		probs = append(probs, "vectorizer "+have.Vectorizer+" (lore sends its own vectors: none)")
	}
	byName := map[string]*models.Property{}
	for _, p := range have.Properties {
		byName[p.Name] = p
	}
	for _, want := range propsOf(kind) {
		p := byName[want.name]
		switch {
		case p == nil:
			probs = append(probs, want.name+" missing")
		case !slices.Equal(p.DataType, []string{want.dataType}):
			probs = append(probs, fmt.Sprintf("%s is %s, not %s", want.name, strings.Join(p.DataType, ","), want.dataType))
		case want.dataType == "text" && p.Tokenization != want.tokenization:
			probs = append(probs, fmt.Sprintf("%s is tokenized %s, not %s", want.name, p.Tokenization, want.tokenization))
		}
	}
	return strings.Join(probs, "; ")
}
