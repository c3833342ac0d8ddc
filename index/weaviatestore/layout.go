package weaviatestore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The layout in the cluster. One meta collection (<prefix>Meta) holds an
// object per index: its current generation, a rebuild's next one, each
// generation's meta keys and sources, what a rebuild of a damaged index
// starts from (Remembered), and the writers' lease. A generation is three
// collections:
//
//	<prefix>_<index>_<gen>_Chunks   one object per chunk, with its vector
//	<prefix>_<index>_<gen>_Docs     one object per document: its DocState
//	<prefix>_<index>_<gen>_Vectors  vector by chunk hash, no vector index
//
// The Vectors collection lets a build store vectors before it writes the
// chunks that use them (PutVectors comes first), so that an interrupted
// build never embeds them again, and chunks of equal hash share one.
// A generation's meta keys live in the meta object, by generation, rather
// than as properties of it: a rebuild's settings must not change what
// readers see before Publish flips Current.

// Collection kinds of a generation.
const (
	kindChunks  = "Chunks"
	kindDocs    = "Docs"
	kindVectors = "Vectors"
)

var kinds = []string{kindChunks, kindDocs, kindVectors}

// validPrefix is what a collection name may start with: Weaviate class
// names start with a capital letter and hold letters, digits and '_'.
var validPrefix = regexp.MustCompile(`^[A-Z][A-Za-z0-9_]{0,63}$`)

func metaClass(prefix string) string { return prefix + "Meta" }

// slug is an index name as a collection name can hold it: lowercased,
// other characters as '_', and a hash of the exact name so that "a.b",
// "a-b" and "A_b" never share collections (Weaviate compares class names
// without regard to case in places).
func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(name))
	return b.String() + "_" + hex.EncodeToString(sum[:4])
}

func className(prefix, name, gen, kind string) string {
	return prefix + "_" + slug(name) + "_" + gen + "_" + kind
}

// newGeneration names a generation: 'g' and the time in base 36.
func newGeneration() string { return "g" + strconv.FormatInt(time.Now().UnixNano(), 36) }

// ns is the namespace of every object UUID lore derives (name-based, so a
// retried batch writes the same objects again rather than duplicates).
var ns = uuid.MustParse("6f0c5a55-1b1e-4f49-9c1a-6c6f72652e31")

func objectID(parts ...string) string {
	return uuid.NewSHA1(ns, []byte(strings.Join(parts, "\x00"))).String()
}

func metaID(name string) string { return objectID("index", name) }

func docUUID(sourceID int64, path string) string {
	return objectID("doc", strconv.FormatInt(sourceID, 10), path)
}

func chunkUUID(sourceID int64, path, version string, ord int) string {
	return objectID("chunk", strconv.FormatInt(sourceID, 10), path, version, strconv.Itoa(ord))
}

func vectorUUID(hash string) string { return objectID("vector", hash) }

// id63 is a stable positive id from parts: the first 8 bytes of their
// SHA-256. Stored as text (see chunkProps).
func id63(parts ...string) int64 {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	id := int64(binary.BigEndian.Uint64(sum[:8]) & (1<<63 - 1))
	if id == 0 {
		id = 1
	}
	return id
}

// docID is DocState.ID: stable for a source's path, so RemoveDocuments
// finds the document's chunks by it.
func docID(sourceID int64, path string) int64 {
	return id63("doc", strconv.FormatInt(sourceID, 10), path)
}

// chunkID is Hit.ChunkID: stable for a place in a document.
func chunkID(sourceID int64, path string, ord int) int64 {
	return id63("chunk", strconv.FormatInt(sourceID, 10), path, strconv.Itoa(ord))
}
