// Package weaviatestore keeps lore's indexes in a Weaviate cluster, behind
// the store seam of package index (Store, Reader, Target, Writer). lore
// sends its own vectors (vectorizer none), searches by BM25 and by vector
// separately and fuses them with its own Reciprocal Rank Fusion, as the
// local store does, so that the two stores rank alike and can be compared.
//
// The official client (weaviate-go-client/v5) talks to one host; the
// store keeps one client per endpoint and moves on to the next when a node
// does not answer, so that a cluster with a node down still serves.
package weaviatestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/lore-cli/lore/index"
	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
)

// Consistency levels, as Weaviate names them.
const (
	One    = "ONE"
	Quorum = "QUORUM"
	All    = "ALL"
)

// Fusion modes of SearchVector (Config.Hybrid).
const (
	// HybridWeaviate asks Weaviate's own hybrid search (alpha 0.5,
	// relative score fusion): the default. On both public question sets
	// it ranks better than lore's RRF over the same two candidate lists
	// (TestEvalStores: hit@5 0.750 against 0.694 on the Prometheus docs,
	// 0.694 against 0.611 on the Go standard library): relative scores
	// keep how far a strong keyword match (an identifier) is ahead, which
	// ranks alone throw away.
	HybridWeaviate = "weaviate"
	// HybridLore runs BM25 and a vector search separately and fuses them
	// with lore's RRF, as the local store does; for comparison.
	HybridLore = "lore"
)

// Config says where the cluster is and how to use it. The zero values of
// the optional fields are the documented defaults.
type Config struct {
	// Endpoints are the nodes' HTTP addresses, http://host:port, tried in
	// order when one does not answer.
	Endpoints []string
	// GRPCEndpoints are the nodes' gRPC addresses (host:port), one per
	// endpoint; by default each endpoint's host with port 50051.
	GRPCEndpoints []string
	// APIKey is sent as a bearer token; never logged nor put in an error.
	APIKey string
	// CollectionPrefix starts every collection lore creates; "Lore" by
	// default. A capital letter, then letters, digits or '_'.
	CollectionPrefix string
	// Replication is the replication factor of new collections; 0 means
	// min(3, the nodes ready when the first build starts).
	Replication int
	// WriteConsistency and ReadConsistency are ONE, QUORUM or ALL;
	// QUORUM and ONE by default.
	WriteConsistency string
	ReadConsistency  string
	// Timeout bounds every call to a node; 10 s by default.
	Timeout time.Duration
	// Hybrid is HybridWeaviate (default) or HybridLore.
	Hybrid string
}

// Store is a Weaviate cluster holding lore's indexes. Safe for concurrent
// use; Close releases nothing the process would not on exit, but says so.
type Store struct {
	cfg    Config
	pool   *pool
	holder string       // this Store's name in a writer's lease
	lease  leaseTimes   // how long its leases last, and their renewals (writer.go)
	leases atomic.Int64 // leases taken: each writer's holder is its own
	// maxResultsSaid: a search has said that the nodes'
	// QUERY_MAXIMUM_RESULTS is too low (see SearchVector).
	maxResultsSaid atomic.Bool

	mu           sync.Mutex
	writing      map[string]bool // lease holders of this Store's open Writers
	factors      map[string]int  // replication factor by class, as read
	aggregateOff time.Time       // until then count scans (see count)
}

var (
	_ index.Store  = (*Store)(nil)
	_ index.Target = (*Store)(nil)
)

// New checks cfg and returns a Store. It does not contact the cluster:
// the first call does.
func New(cfg Config) (*Store, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("weaviate-endpoints: none given: name the cluster's nodes, e.g. http://127.0.0.1:8080")
	}
	if len(cfg.GRPCEndpoints) != 0 && len(cfg.GRPCEndpoints) != len(cfg.Endpoints) {
		return nil, fmt.Errorf("weaviate-grpc-endpoints: %d given for %d endpoints: give one per endpoint, or none for port 50051",
			len(cfg.GRPCEndpoints), len(cfg.Endpoints))
	}
	if cfg.CollectionPrefix == "" {
		cfg.CollectionPrefix = "Lore"
	}
	if !validPrefix.MatchString(cfg.CollectionPrefix) {
		return nil, fmt.Errorf("weaviate-collection-prefix: %q: start with a capital letter, then letters, digits or '_'", cfg.CollectionPrefix)
	}
	if cfg.Replication < 0 {
		return nil, fmt.Errorf("weaviate-replication: %d: give 0 (as many nodes as are up, at most 3) or more", cfg.Replication)
	}
	for _, c := range []*string{&cfg.WriteConsistency, &cfg.ReadConsistency} {
		def := Quorum
		if c == &cfg.ReadConsistency {
			def = One
		}
		*c = strings.ToUpper(strings.TrimSpace(*c))
		switch *c {
		case "":
			*c = def
		case One, Quorum, All:
		default:
			return nil, fmt.Errorf("weaviate consistency %q: use ONE, QUORUM or ALL", *c)
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	switch cfg.Hybrid {
	case "":
		cfg.Hybrid = HybridWeaviate
	case HybridLore, HybridWeaviate:
	default:
		return nil, fmt.Errorf("weaviate hybrid %q: use %s or %s", cfg.Hybrid, HybridLore, HybridWeaviate)
	}
	p := &pool{timeout: cfg.Timeout}
	if cfg.APIKey != "" {
		p.headers = map[string]string{"Authorization": "Bearer " + cfg.APIKey}
	}
	for i, e := range cfg.Endpoints {
		u, err := url.Parse(strings.TrimRight(strings.TrimSpace(e), "/"))
		if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil {
			return nil, fmt.Errorf("weaviate-endpoints: %q is not an address like http://127.0.0.1:8080", e)
		}
		host := u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), "8080")
		}
		g := net.JoinHostPort(u.Hostname(), "50051")
		if len(cfg.GRPCEndpoints) > 0 {
			g = strings.TrimSpace(cfg.GRPCEndpoints[i])
			if _, _, err := net.SplitHostPort(g); err != nil {
				return nil, fmt.Errorf("weaviate-grpc-endpoints: %q is not host:port", g)
			}
		}
		p.eps = append(p.eps, &endpoint{url: "http://" + host, host: host, grpc: g})
	}
	hostname, _ := os.Hostname()
	return &Store{
		cfg:     cfg,
		pool:    p,
		holder:  fmt.Sprintf("%s pid %d (%s)", hostname, os.Getpid(), newGeneration()),
		lease:   defaultLeaseTimes(),
		factors: map[string]int{}, writing: map[string]bool{},
	}, nil
}

// Kind is "weaviate".
func (s *Store) Kind() string { return "weaviate" }

// Close releases the store. The client keeps a gRPC connection per
// endpoint it used and offers no way to close it: it goes with the process.
func (s *Store) Close() error { return nil }

// opError is a failed call: what lore was doing, and the server's or the
// network's reason cut to one short line.
type opError struct {
	what string
	err  error
	fix  string // what to do, when lore knows; else lore doctor tells
}

func (e *opError) Error() string {
	if e.fix != "" {
		return "weaviate: " + e.what + ": " + oneLine(e.err) + ": " + e.fix
	}
	return "weaviate: " + e.what + ": " + oneLine(e.err) + " (see `lore doctor` for the cluster's state)"
}
func (e *opError) Unwrap() error { return e.err }

// wrap names what failed. An unreachable cluster's error already says
// everything (the endpoints and the fix) and passes as it is.
func (s *Store) wrap(err error, what string) error {
	var ue *UnreachableError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue), errors.Is(err, context.Canceled), errors.Is(err, ErrNoQuorum):
		return err
	}
	if limit, ok := maxResultsRefused(err); ok {
		// The fix is a setting on every node: say which.
		return &opError{what, err, maxResultsAdvice(limit)}
	}
	return &opError{what: what, err: err}
}

func (s *Store) endpoints() string {
	urls := make([]string, len(s.pool.eps))
	for i, ep := range s.pool.eps {
		urls[i] = ep.url
	}
	return strings.Join(urls, ", ")
}

func (s *Store) class(name, gen, kind string) string {
	return className(s.cfg.CollectionPrefix, name, gen, kind)
}

// state is an index's meta object.
type state struct {
	Name        string
	Current     string // the generation readers use; "" before the first build
	Next        string // a rebuild in progress
	Gens        map[string]*genState
	Remembered  *index.Remembered
	LockHolder  string
	LockExpires int64 // unix milliseconds
	// Damaged says why the meta object could not be read (List only:
	// such a state has nothing else).
	Damaged string
}

// genState is what one generation keeps beside its collections.
type genState struct {
	Meta        map[string]string `json:"meta"`
	Sources     []index.Source    `json:"sources"`
	Replication int               `json:"replication"`
	// Unverified is when the first write since the last Publish began
	// (unix ns): Publish checks the documents written from then on.
	Unverified int64 `json:"unverified,omitempty"`
	// Pending are the documents (by doc id) whose chunks went in without
	// their vectors, the embedder being down (WriteRequest.DeferVectors),
	// until a build writes them with their vectors or removes them.
	Pending map[string]pendingDoc `json:"pending,omitempty"`
}

// pendingDoc is a document whose vectors are pending.
type pendingDoc struct {
	SourceID int64  `json:"source_id"`
	Path     string `json:"path"`
}

func (st *state) gen(g string) *genState {
	if st.Gens == nil {
		st.Gens = map[string]*genState{}
	}
	if st.Gens[g] == nil {
		st.Gens[g] = &genState{Meta: map[string]string{}}
	}
	if st.Gens[g].Meta == nil {
		st.Gens[g].Meta = map[string]string{}
	}
	return st.Gens[g]
}

// readState reads name's meta object; nil (and no error) when there is
// none, or no meta collection yet.
func (s *Store) readState(ctx context.Context, name, consistency string) (*state, error) {
	if consistency != s.cfg.WriteConsistency {
		// The meta object says which generation is current, and a
		// publish deletes the one before: read it as it was written
		// (QUORUM), so that a node that missed the flip does not send
		// readers to a deleted generation; at the read consistency only
		// when too few nodes answer for that (all but one down).
		if st, err := s.readState(ctx, name, s.cfg.WriteConsistency); err == nil || ctx.Err() != nil {
			return st, err
		}
	}
	var obj *models.Object
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		objs, err := c.Data().ObjectsGetter().WithClassName(metaClass(s.cfg.CollectionPrefix)).WithID(metaID(name)).
			WithConsistencyLevel(consistency).Do(ctx)
		if statusCode(err) == http.StatusNotFound {
			obj = nil
			return nil
		}
		if err == nil && len(objs) == 1 {
			obj = objs[0]
		}
		return err
	})
	if err != nil {
		return nil, s.wrap(err, "read index "+strconv.Quote(name))
	}
	if obj == nil {
		return nil, nil
	}
	st, err := parseState(obj.Properties)
	if err != nil {
		// Neither a build nor a read can trust it: only removal mends it
		// (Remove deletes the index's collections by their names).
		return nil, &index.DamagedError{Index: name, Reason: s.metaDamage(err),
			Fix: fmt.Sprintf("remove it (lore index rm %s), then index its folders again", name), Err: err}
	}
	return st, nil
}

// metaDamage is why an index whose meta object parseState refused is
// damaged.
func (s *Store) metaDamage(err error) string {
	return "its meta object in " + metaClass(s.cfg.CollectionPrefix) + " is not lore's: " + oneLine(err)
}

func parseState(props any) (*state, error) {
	m, ok := props.(map[string]any)
	if !ok {
		return nil, errors.New("no properties")
	}
	str := func(k string) string { v, _ := m[k].(string); return v }
	st := &state{Name: str("name"), Current: str("current"), Next: str("next"), LockHolder: str("lock_holder")}
	if f, ok := m["lock_expires"].(float64); ok {
		st.LockExpires = int64(f)
	} else if n, ok := m["lock_expires"].(json.Number); ok {
		st.LockExpires, _ = n.Int64()
	}
	if g := str("generations"); g != "" {
		if err := json.Unmarshal([]byte(g), &st.Gens); err != nil {
			return nil, fmt.Errorf("generations: %w", err)
		}
	}
	if r := str("remembered"); r != "" {
		st.Remembered = &index.Remembered{}
		if err := json.Unmarshal([]byte(r), st.Remembered); err != nil {
			return nil, fmt.Errorf("remembered: %w", err)
		}
	}
	return st, nil
}

// writeState replaces name's meta object: one object, so that a flip of
// Current is all or nothing.
func (s *Store) writeState(ctx context.Context, st *state) error {
	gens, err := json.Marshal(st.Gens)
	if err != nil {
		return err
	}
	props := map[string]any{
		"name": st.Name, "current": st.Current, "next": st.Next, "generations": string(gens),
		"lock_holder": st.LockHolder, "lock_expires": st.LockExpires,
	}
	if st.Remembered != nil {
		r, err := json.Marshal(st.Remembered)
		if err != nil {
			return err
		}
		props["remembered"] = string(r)
	}
	obj := &models.Object{Class: metaClass(s.cfg.CollectionPrefix), ID: strfmt.UUID(metaID(st.Name)), Properties: props}
	return s.insert(ctx, "write index "+strconv.Quote(st.Name), []*models.Object{obj}, nil)
}

func (s *Store) deleteState(ctx context.Context, name string) error {
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		err := c.Data().Deleter().WithClassName(metaClass(s.cfg.CollectionPrefix)).WithID(metaID(name)).
			WithConsistencyLevel(s.cfg.WriteConsistency).Do(ctx)
		if statusCode(err) == http.StatusNotFound {
			return nil
		}
		return err
	})
	return s.wrap(err, "remove index "+strconv.Quote(name))
}

// maxIndexes bounds how many meta objects List reads.
const maxIndexes = 10000

// states reads every index's meta object.
func (s *Store) states(ctx context.Context) ([]*state, error) {
	mc := metaClass(s.cfg.CollectionPrefix)
	cl, err := s.getClass(ctx, mc)
	if err != nil {
		return nil, s.wrap(err, "list indexes")
	}
	if cl == nil {
		return nil, nil
	}
	var out []*state
	err = s.scan(ctx, mc, []string{"name", "current", "next", "generations", "remembered", "lock_holder", "lock_expires"}, maxIndexes,
		func(o map[string]any) error {
			st, err := parseState(o)
			if err != nil {
				// Listed as damaged, so that `lore index list` shows what
				// `lore index rm` can remove.
				if name, _ := o["name"].(string); name != "" {
					out = append(out, &state{Name: name, Damaged: s.metaDamage(err)})
				}
				return nil
			}
			out = append(out, st)
			return nil
		})
	if err != nil {
		return nil, s.wrap(err, "list indexes")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// List describes every index in the cluster.
func (s *Store) List(ctx context.Context) ([]index.Info, error) {
	sts, err := s.states(ctx)
	if err != nil {
		return nil, err
	}
	out := []index.Info{}
	for _, st := range sts {
		out = append(out, s.info(ctx, st))
	}
	return out, nil
}

// info is st as List shows it: Chunks is a bounded count, 0 when the
// cluster cannot give one in time.
func (s *Store) info(ctx context.Context, st *state) index.Info {
	in := index.Info{Name: st.Name, Built: st.Current != ""}
	if st.Damaged != "" {
		in.Built, in.Damaged, in.Path = true, st.Damaged, "weaviate:"+metaClass(s.cfg.CollectionPrefix)
		return in
	}
	if st.Current == "" {
		if st.Next != "" {
			in.Path = "weaviate:" + s.class(st.Name, st.Next, kindChunks)
		}
		return in
	}
	chunks := s.class(st.Name, st.Current, kindChunks)
	in.Path = "weaviate:" + chunks
	g := st.gen(st.Current)
	in.Embedder = g.Meta["embedder"]
	in.BuiltAt = unixTime(g.Meta["built_at"])
	n, err := s.count(ctx, chunks)
	if isMissingClass(err) {
		in.Damaged = "its collections are missing from the cluster"
	}
	if err != nil {
		return in
	}
	in.Chunks = n
	return in
}

func unixTime(v string) *time.Time {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	t := time.Unix(n, 0)
	return &t
}

// Names lists the indexes, sorted.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	sts, err := s.states(ctx)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, st := range sts {
		names = append(names, st.Name)
	}
	return names, nil
}

// Generation is the collection Open(name) would read now, "" when none.
func (s *Store) Generation(ctx context.Context, name string) string {
	st, err := s.readState(ctx, name, s.cfg.ReadConsistency)
	if err != nil || st == nil || st.Current == "" {
		return ""
	}
	return s.class(name, st.Current, kindChunks)
}

// Open opens name's current generation for reading.
func (s *Store) Open(ctx context.Context, name string) (index.Reader, error) {
	return s.open(ctx, name)
}

func (s *Store) open(ctx context.Context, name string) (*Reader, error) {
	st, err := s.readState(ctx, name, s.cfg.ReadConsistency)
	if err != nil {
		return nil, err
	}
	if st == nil || st.Current == "" {
		return nil, fmt.Errorf("%w %q: build it with `lore index PATH`", index.ErrNoIndex, name)
	}
	r := &Reader{s: s, name: name, gen: st.Current, v: newView(st.gen(st.Current))}
	r.chunks, r.docs, r.vectors = s.class(name, st.Current, kindChunks), s.class(name, st.Current, kindDocs), s.class(name, st.Current, kindVectors)
	if err := s.checkFormat(ctx, name, r.chunks); err != nil {
		return nil, err
	}
	return r, nil
}

// checkFormat refuses an index whose chunks collection is not as this
// lore creates it (schemaProblems, what `lore doctor` reports): one
// written by an older lore lacks properties this one searches
// (part_terms), and a search would fail on them or miss what they hold.
// A collection that is gone or cannot be read now is left to the
// search (a DamagedError, a node down).
func (s *Store) checkFormat(ctx context.Context, name, chunks string) error {
	cl, err := s.getClass(ctx, chunks)
	if err != nil || cl == nil {
		return nil
	}
	return chunksFormat(name, cl)
}

// chunksFormat is checkFormat of the chunks collection cl as read.
func chunksFormat(name string, cl *models.Class) error {
	if p := schemaProblems(cl, kindChunks); p != "" {
		return formatError(fmt.Sprintf("index %q was built by another lore (collection %s: %s): run `lore index --rebuild`", name, clip(cl.Class), clip(p)))
	}
	return nil
}

// formatError is an index this lore cannot read or write as it is: it is
// index.ErrOldFormat.
type formatError string

func (e formatError) Error() string        { return string(e) }
func (e formatError) Is(target error) bool { return target == index.ErrOldFormat }

// Status is name's Status. An index whose collections are gone still has
// one: its name, sources and Damaged.
func (s *Store) Status(ctx context.Context, name string) (index.Status, error) {
	r, err := s.open(ctx, name)
	if err != nil {
		return index.Status{}, err
	}
	return r.Status(ctx)
}

// Remembered is what a rebuild of name starts from: the sources and
// embedder recorded by the last build, else those of its generation.
func (s *Store) Remembered(ctx context.Context, name string) (index.Remembered, error) {
	st, err := s.readState(ctx, name, s.cfg.ReadConsistency)
	if err != nil {
		return index.Remembered{}, err
	}
	if st == nil {
		return index.Remembered{}, fmt.Errorf("%w %q: build it with `lore index PATH`", index.ErrNoIndex, name)
	}
	return remembered(st), nil
}

func remembered(st *state) index.Remembered {
	if st.Remembered != nil && len(st.Remembered.Sources) > 0 {
		return *st.Remembered
	}
	r := index.Remembered{Sources: []string{}}
	g := st.Current
	if g == "" {
		g = st.Next
	}
	if g != "" {
		gs := st.gen(g)
		for _, src := range gs.Sources {
			r.Sources = append(r.Sources, src.Root)
		}
		r.Embedder = gs.Meta["embedder"]
	}
	return r
}

// Remove deletes name's collections and meta object once confirm (when
// not nil) agrees. It refuses while a writer holds the index.
func (s *Store) Remove(ctx context.Context, name string, confirm func(index.Info) error) (index.Info, error) {
	st, err := s.readState(ctx, name, s.cfg.WriteConsistency)
	var damaged *index.DamagedError
	if errors.As(err, &damaged) {
		return s.removeDamaged(ctx, name, damaged.Reason, confirm)
	}
	if err != nil {
		return index.Info{}, err
	}
	if st == nil {
		return index.Info{}, fmt.Errorf("%w %q: see `lore index list`", index.ErrNoIndex, name)
	}
	if err := s.leaseHeld(st); err != nil {
		return index.Info{}, fmt.Errorf("cannot remove index %q: %w", name, err)
	}
	// Held from here on, so that no build begins while confirm asks.
	holder := s.newHolder()
	st.LockHolder, st.LockExpires = holder, s.lease.expiry()
	if err := s.writeState(ctx, st); err != nil {
		s.giveBack(ctx, name, holder) // it may have landed
		return index.Info{}, err
	}
	// Read back after the pause, as BeginWrite does: a build that began
	// at the same time and wrote its lease last goes on, and this gives
	// way rather than delete the collections under it.
	if err := s.settleLease(ctx, name, holder); err != nil {
		return index.Info{}, lockedWrap(err, "cannot remove index %q: %w", name)
	}
	// Renewed while the user reads the prompt (minutes, maybe) and info
	// counts: lapsed, a build could take the index and begin writing
	// what this removal is about to delete.
	keep := s.keepLease(name, holder)
	defer keep.stop()
	in := s.info(ctx, st)
	if confirm != nil {
		if err := confirm(in); err != nil {
			keep.stop()
			s.giveBack(ctx, name, holder)
			return in, err
		}
	}
	// Stopped before the meta object goes: a renewal landing after the
	// delete would write it back. Then read back once more: a lease lost
	// meanwhile (renewals failed until it lapsed) may be a build's now,
	// and its collections are not this removal's to delete.
	err = keep.stop()
	if err == nil {
		err = s.stillHeld(ctx, name, holder, afterLapse)
	}
	if err != nil {
		// Still ours after a failed read (the cluster out of reach, a
		// Ctrl+C): given back, not left to refuse builds until it lapses.
		s.giveBack(ctx, name, holder)
		return in, lockedWrap(err, "cannot remove index %q (nothing was removed): %w", name)
	}
	gens := map[string]bool{st.Current: true, st.Next: true}
	for g := range st.Gens {
		gens[g] = true
	}
	// The meta object first: an interrupted removal leaves collections no
	// index names (Health lists them), never an index without its data.
	if err := s.deleteState(ctx, name); err != nil {
		return in, err
	}
	// Its watcher ends at its next batch; a lease left behind is no harm.
	s.deleteWatch(ctx, name)
	for g := range gens {
		if g == "" {
			continue
		}
		for _, k := range kinds {
			if err := s.deleteClass(ctx, s.class(name, g, k)); err != nil {
				return in, err
			}
		}
	}
	return in, nil
}

// settleLease reads back, after leaseSettle, the lease holder wrote in
// name's meta object: Weaviate has no compare-and-set, and of two that
// began at once (two builds, a build and a removal) the one whose write
// was overwritten finds out here. Read back at once, each found its own
// lease and both went on; after the pause both read the last write. When
// the pause or the read fails (Ctrl+C, a cancelled batch), the lease is
// given back: left, it would refuse every other machine until it expired.
func (s *Store) settleLease(ctx context.Context, name, holder string) error {
	return s.settle(ctx, func(ctx context.Context) error { return s.stillHeld(ctx, name, holder, atOnce) },
		func() { s.giveBack(ctx, name, holder) })
}

// settle is the read-back of a lease just written, the writers' (in the
// meta object) or a watcher's (in its watch object): after the pause,
// held says whether it is still the caller's (nil), or who has it
// (ErrLocked) or that the index is gone (ErrNoIndex). Any other failure
// gives it back with release.
func (s *Store) settle(ctx context.Context, held func(context.Context) error, release func()) error {
	err := s.lease.pause(ctx)
	if err == nil {
		err = held(ctx)
	}
	if err != nil && !errors.Is(err, index.ErrLocked) && !errors.Is(err, index.ErrNoIndex) {
		release()
	}
	return err
}

// When another took a lease over, as holds tells it.
const (
	atOnce     = "at the same time"                                    // a race at the settle
	afterLapse = "after this one's lease lapsed (not renewed in time)" // a renewal that found it lost
)

// stillHeld is nil while holder holds name's lease, and otherwise says who
// does (ErrLocked) or that the index is gone (ErrNoIndex), and when.
func (s *Store) stillHeld(ctx context.Context, name, holder, when string) error {
	back, err := s.readState(ctx, name, s.cfg.WriteConsistency)
	if err != nil {
		return err
	}
	return holds(back, name, holder, when)
}

// holds is stillHeld of the meta object back as read.
func holds(back *state, name, holder, when string) error {
	switch {
	case back == nil:
		return fmt.Errorf("%w %q: another lore removed it %s", index.ErrNoIndex, name, when)
	case back.LockHolder != holder:
		other := "another lore"
		if back.LockHolder != "" {
			other = clip(back.LockHolder)
		}
		return fmt.Errorf("%w: %s began writing it %s", index.ErrLocked, other, when)
	}
	return nil
}

// keeper renews a lease that is not a Writer's (Remove's) until stop.
type keeper struct {
	s            *Store
	name, holder string
	once         sync.Once
	quit, done   chan struct{}
	lost         error // set by the renewal before done closes
}

// keepLease renews holder's lease on name every lease.renew, as a Writer
// renews its own: read back first, and once another holds the lease (it
// lapsed and was taken over) or the index is gone, never written again.
func (s *Store) keepLease(name, holder string) *keeper {
	k := &keeper{s: s, name: name, holder: holder, quit: make(chan struct{}), done: make(chan struct{})}
	go k.run()
	return k
}

func (k *keeper) run() {
	defer close(k.done)
	renewLoop(k.s.lease.renew, k.quit, func() bool {
		k.lost = k.renewOnce()
		return k.lost != nil
	})
}

// renewLoop calls renew at each tick of its interval (lease.renew) until
// quit closes or renew says the lease was lost: the loop of every lease
// (a Writer's, a watcher's, Remove's). A failed renewal is tried again at the next tick; a lease
// outlives three misses.
func renewLoop(every time.Duration, quit <-chan struct{}, renew func() (lost bool)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			if renew() {
				return
			}
		}
	}
}

// renewOnce is nil unless the lease was found lost (ErrLocked, ErrNoIndex).
func (k *keeper) renewOnce() error {
	ctx, cancel := context.WithTimeout(context.Background(), k.s.cfg.Timeout)
	defer cancel()
	back, err := k.s.readState(ctx, k.name, k.s.cfg.WriteConsistency)
	if err != nil {
		return nil
	}
	if err := holds(back, k.name, k.holder, afterLapse); err != nil {
		return err
	}
	back.LockExpires = k.s.lease.expiry()
	k.s.writeState(ctx, back)
	return nil
}

// stop ends the renewal and waits for it, so that nothing is written
// after; it says whether the lease was found lost. Safe to call again.
func (k *keeper) stop() error {
	k.once.Do(func() { close(k.quit) })
	<-k.done
	return k.lost
}

// lockedWrap names the index in an ErrLocked error (format takes the name
// and the error); other errors name it already, or need not.
func lockedWrap(err error, format, name string) error {
	if errors.Is(err, index.ErrLocked) {
		return fmt.Errorf(format, name, err)
	}
	return err
}

// giveBack clears name's lease if holder still holds it, on a context of
// its own: the caller's may be the one that was cancelled.
func (s *Store) giveBack(ctx context.Context, name, holder string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	defer cancel()
	back, err := s.readState(ctx, name, s.cfg.WriteConsistency)
	if err != nil || back == nil || back.LockHolder != holder {
		return
	}
	back.LockHolder, back.LockExpires = "", 0
	s.writeState(ctx, back)
}

// removeDamaged removes an index whose meta object lore cannot read, so
// knows neither its generations nor its lease: the meta object, then every
// collection named after the index (its slug carries a hash of the exact
// name, so no other index's collections share the prefix).
func (s *Store) removeDamaged(ctx context.Context, name, reason string, confirm func(index.Info) error) (index.Info, error) {
	in := index.Info{Name: name, Built: true, Damaged: reason, Path: "weaviate:" + metaClass(s.cfg.CollectionPrefix)}
	if confirm != nil {
		if err := confirm(in); err != nil {
			return in, err
		}
	}
	var classes []string
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		d, err := c.Schema().Getter().Do(ctx)
		if err != nil || d == nil {
			return err
		}
		prefix := className(s.cfg.CollectionPrefix, name, "g", "")
		prefix = prefix[:len(prefix)-len("_")]
		for _, cl := range d.Classes {
			if cl != nil && strings.HasPrefix(cl.Class, prefix) {
				classes = append(classes, cl.Class)
			}
		}
		return nil
	})
	if err != nil {
		return in, s.wrap(err, "read the schema")
	}
	if err := s.deleteState(ctx, name); err != nil {
		return in, err
	}
	// Its watcher ends at its next batch; a lease left behind is no harm.
	s.deleteWatch(ctx, name)
	for _, cl := range classes {
		if err := s.deleteClass(ctx, cl); err != nil {
			return in, err
		}
	}
	return in, nil
}

// Build creates or refreshes an index, driving this store's Writer with
// the shared incremental builder.
func (s *Store) Build(ctx context.Context, opt index.BuildOptions) (index.Summary, error) {
	return index.BuildTo(ctx, s, opt)
}

// count is how many objects class holds, by an Aggregate bounded by a
// short deadline. With a node down, Aggregate waits on the dead node
// rather than ask a replica (docs/weaviate.md): past the deadline
// the objects' ids are counted by a cursor scan instead (exact, but a
// pass over the collection), and for a minute the store counts that way
// without trying Aggregate again. The nodes' shard statistics are no
// fallback: they lag writes by minutes (0 for a new collection).
func (s *Store) count(ctx context.Context, class string) (int, error) {
	s.mu.Lock()
	scanOnly := time.Now().Before(s.aggregateOff)
	s.mu.Unlock()
	if !scanOnly {
		n, err := s.aggregateCount(ctx, class)
		switch {
		case err == nil:
			return n, nil
		case ctx.Err() != nil:
			return 0, ctx.Err()
		case isMissingClass(err):
			return 0, s.wrap(err, "count "+class)
		case !errors.Is(err, ErrUnreachable) && !unreachable(err):
			return 0, s.wrap(err, "count "+class)
		}
		s.mu.Lock()
		s.aggregateOff = time.Now().Add(time.Minute)
		s.mu.Unlock()
	}
	n := 0
	err := s.scan(ctx, class, nil, maxScan, func(map[string]any) error { n++; return nil })
	if err != nil {
		return 0, s.wrap(err, "count "+class)
	}
	return n, nil
}

// countWhere counts the objects of class that where matches, by an
// Aggregate bounded as count's is. It has no scan to fall back on: a
// caller that gets an error counts its own way.
func (s *Store) countWhere(ctx context.Context, class string, where *filters.WhereBuilder) (int, error) {
	s.mu.Lock()
	off := time.Now().Before(s.aggregateOff)
	s.mu.Unlock()
	if off {
		return 0, errors.New("aggregate off: a node did not answer one lately")
	}
	return s.aggregate(ctx, class, where)
}

func (s *Store) aggregateCount(ctx context.Context, class string) (int, error) {
	return s.aggregate(ctx, class, nil)
}

func (s *Store) aggregate(ctx context.Context, class string, where *filters.WhereBuilder) (int, error) {
	var n int
	actx, cancel := context.WithTimeout(ctx, min(s.cfg.Timeout, 5*time.Second))
	defer cancel()
	err := s.pool.do(actx, func(ctx context.Context, c *wv.Client) error {
		agg := c.GraphQL().Aggregate().WithClassName(class).
			WithFields(graphql.Field{Name: "meta", Fields: []graphql.Field{{Name: "count"}}})
		if where != nil {
			agg = agg.WithWhere(where)
		}
		resp, err := agg.Do(ctx)
		if err != nil {
			return err
		}
		var out map[string][]struct {
			Meta struct{ Count int } `json:"meta"`
		}
		if err := decodeGQL(resp, "Aggregate", &out); err != nil {
			return err
		}
		if rows := out[class]; len(rows) == 1 {
			n = rows[0].Meta.Count
		}
		return nil
	})
	return n, err
}
