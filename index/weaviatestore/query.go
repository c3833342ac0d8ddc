package weaviatestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	wv "github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
	"golang.org/x/sync/errgroup"
)

// Batches: 100 objects (a chunk with a 768-dimensional vector is about
// 6 KB over gRPC), three in flight, each tried up to four times.
const (
	batchSize     = 100
	batchWorkers  = 3
	batchAttempts = 4
	// scanPage is the page of a cursor scan (Files, Documents, GC).
	scanPage = 500
	// maxScan bounds the objects any one scan reads.
	maxScan = 2_000_000
)

// gqlError is an error the server put in a GraphQL answer.
type gqlError struct{ msg string }

func (e *gqlError) Error() string { return e.msg }

// decodeGQL decodes resp.Data[root] into out, or returns the answer's
// first error.
func decodeGQL(resp *models.GraphQLResponse, root string, out any) error {
	if resp == nil {
		return errors.New("empty GraphQL answer")
	}
	if len(resp.Errors) > 0 && resp.Errors[0] != nil {
		return &gqlError{resp.Errors[0].Message}
	}
	b, err := json.Marshal(resp.Data[root])
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// maxResultsRE finds the limit in the error of a query that asked for
// more objects than a node's QUERY_MAXIMUM_RESULTS ("query maximum
// results exceeded: … QUERY_MAXIMUM_RESULTS '1000'").
var maxResultsRE = regexp.MustCompile(`QUERY_MAXIMUM_RESULTS '(\d+)'`)

// maxResultsRefused reports whether err is a node refusing a query for
// asking more objects than its QUERY_MAXIMUM_RESULTS, and that limit
// ("" when the message does not say).
func maxResultsRefused(err error) (limit string, ok bool) {
	if err == nil || !strings.Contains(err.Error(), "query maximum results exceeded") {
		return "", false
	}
	if m := maxResultsRE.FindStringSubmatch(err.Error()); m != nil {
		return m[1], true
	}
	return "", true
}

// maxResultsAdvice says what a QUERY_MAXIMUM_RESULTS of limit costs and
// what to set instead.
func maxResultsAdvice(limit string) string {
	if limit == "" {
		limit = "below " + strconv.Itoa(listLimit)
	}
	return fmt.Sprintf("the cluster's QUERY_MAXIMUM_RESULTS is %s, fewer objects than lore reads at once (a build lists up to %d, keyword ranking samples %d chunks): set QUERY_MAXIMUM_RESULTS=%d (Weaviate's default) on every node",
		limit, listLimit, sampleSize, listLimit)
}

// isMissingClass tells whether err is the server saying the collection
// does not exist: GraphQL does not know the class, or REST does not.
func isMissingClass(err error) bool {
	var g *gqlError
	if errors.As(err, &g) {
		return strings.Contains(g.msg, "Cannot query field")
	}
	var we *fault.WeaviateClientError
	for errors.As(err, &we) {
		if we.DerivedFromError == nil {
			m := strings.ToLower(we.Msg)
			return we.StatusCode >= 400 && we.StatusCode < 500 &&
				(strings.Contains(m, "could not find class") || strings.Contains(m, "class not found") || strings.Contains(m, "no such class"))
		}
		err = we.DerivedFromError
	}
	return false
}

// readLevel is the consistency level a read of class asks for: none on a
// class that is not replicated (GraphQL refuses the argument there).
func (s *Store) readLevel(ctx context.Context, class string) string {
	if s.factor(ctx, class) > 1 {
		return s.cfg.ReadConsistency
	}
	return ""
}

// get runs a GraphQL Get on class and decodes its objects into out (a
// pointer to a slice).
func (s *Store) get(ctx context.Context, class string, build func(*graphql.GetBuilder) *graphql.GetBuilder, out any) error {
	return s.getAt(ctx, class, s.readLevel(ctx, class), build, out)
}

// getAt is get at a consistency level of the caller's ("" for none).
func (s *Store) getAt(ctx context.Context, class, level string, build func(*graphql.GetBuilder) *graphql.GetBuilder, out any) error {
	return s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		b := build(c.GraphQL().Get().WithClassName(class))
		if level != "" {
			b = b.WithConsistencyLevel(level)
		}
		resp, err := b.Do(ctx)
		if err != nil {
			return err
		}
		var byClass map[string]json.RawMessage
		if err := decodeGQL(resp, "Get", &byClass); err != nil {
			return err
		}
		raw := byClass[class]
		if len(raw) == 0 || string(raw) == "null" {
			raw = []byte("[]")
		}
		return json.Unmarshal(raw, out)
	})
}

func fields(names ...string) []graphql.Field {
	out := make([]graphql.Field, 0, len(names))
	for _, n := range names {
		out = append(out, graphql.Field{Name: n})
	}
	return out
}

func additional(names ...string) graphql.Field {
	return graphql.Field{Name: "_additional", Fields: fields(names...)}
}

// objectByID reads one object by id, nil when the cluster does not hold
// it. On a replicated class it asks at the write consistency: those
// replicas overlap the ones that acknowledged the write, whichever node is
// down (a listing reads one replica), and a replica behind is repaired on
// the way.
func (s *Store) objectByID(ctx context.Context, class, id string, vector bool) (*models.Object, error) {
	var out *models.Object
	err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
		b := c.Data().ObjectsGetter().WithClassName(class).WithID(id)
		if vector {
			b = b.WithVector()
		}
		if s.factor(ctx, class) > 1 {
			b = b.WithConsistencyLevel(s.cfg.WriteConsistency)
		}
		objs, err := b.Do(ctx)
		if statusCode(err) == http.StatusNotFound {
			return nil
		}
		if err == nil && len(objs) == 1 {
			out = objs[0]
		}
		return err
	})
	return out, err
}

// scan reads every object of class, a page at a time by cursor (a cursor
// takes no filter: fn filters), at most limit of them.
func (s *Store) scan(ctx context.Context, class string, props []string, limit int, fn func(map[string]any) error) error {
	after, seen := "", 0
	fs := append(fields(props...), additional("id"))
	for {
		var page []map[string]any
		err := s.get(ctx, class, func(b *graphql.GetBuilder) *graphql.GetBuilder {
			b = b.WithFields(fs...).WithLimit(scanPage)
			if after != "" {
				b = b.WithAfter(after)
			}
			return b
		}, &page)
		if err != nil {
			return err
		}
		for _, o := range page {
			if err := fn(o); err != nil {
				return err
			}
		}
		seen += len(page)
		if len(page) < scanPage {
			return nil
		}
		if seen >= limit {
			return fmt.Errorf("%s holds more than %d objects: more than lore reads at once", class, limit)
		}
		add, _ := page[len(page)-1]["_additional"].(map[string]any)
		after, _ = add["id"].(string)
		if after == "" {
			return errors.New("a page without ids: cannot go on")
		}
	}
}

// insert writes objs (an upsert: their ids are derived, so writing one
// twice replaces it) in batches, a few at once, retrying what failed.
// The client reports failures per object: a batch without an error can
// still have lost some, and those are retried alone.
func (s *Store) insert(ctx context.Context, what string, objs []*models.Object, done func(n int)) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(batchWorkers)
	for i := 0; i < len(objs); i += batchSize {
		b := objs[i:min(i+batchSize, len(objs))]
		g.Go(func() error {
			if err := s.insertBatch(gctx, what, b); err != nil {
				return err
			}
			if done != nil {
				done(len(b))
			}
			return nil
		})
	}
	return g.Wait()
}

func (s *Store) insertBatch(ctx context.Context, what string, objs []*models.Object) error {
	todo := objs
	var last error
	for attempt := range batchAttempts {
		if attempt > 0 {
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return err
			}
		}
		var res []models.ObjectsGetResponse
		err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
			var err error
			res, err = c.Batch().ObjectsBatcher().WithObjects(todo...).WithConsistencyLevel(s.cfg.WriteConsistency).Do(ctx)
			return err
		})
		if err != nil {
			last = err
			if ctx.Err() != nil || !retryable(err) {
				break
			}
			continue
		}
		var failed []*models.Object
		for i, r := range res {
			if r.Result != nil && r.Result.Errors != nil && len(r.Result.Errors.Error) > 0 && i < len(todo) {
				failed = append(failed, todo[i])
				if e := r.Result.Errors.Error[0]; e != nil {
					last = errors.New(e.Message)
				}
			}
		}
		if len(failed) == 0 {
			return nil
		}
		todo = failed
		if !retryable(last) {
			break
		}
	}
	return s.writeError(last, fmt.Sprintf("%s: %d of %d objects not written", what, len(todo), len(objs)))
}

// retryable: a transient failure, or no node answering (it may be
// restarting: a few seconds of backoff cost little in a build).
func retryable(err error) bool { return transient(err) || errors.Is(err, ErrUnreachable) }

// writeError names a write that failed for good: a cluster without enough
// replicas up gets the message that says so and that a rerun resumes.
func (s *Store) writeError(err error, what string) error {
	if err != nil && noQuorum(err.Error()) {
		return fmt.Errorf("%w: too few replicas acknowledged the write (consistency %s; endpoints %s; the server said: %s): bring its nodes back and run the build again; it resumes where this one stopped",
			ErrNoQuorum, s.cfg.WriteConsistency, s.endpoints(), oneLine(err))
	}
	return s.wrap(err, what)
}

func backoff(attempt int) time.Duration { return 250 * time.Millisecond << attempt }

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// deleteWhere deletes class's objects that where matches. One call deletes
// at most the server's QUERY_MAXIMUM_RESULTS: it goes on until none match.
func (s *Store) deleteWhere(ctx context.Context, what, class string, where *filters.WhereBuilder) error {
	retries := 0
	for round := 0; round < 1000; round++ {
		var res *models.BatchDeleteResponse
		err := s.pool.do(ctx, func(ctx context.Context, c *wv.Client) error {
			var err error
			res, err = c.Batch().ObjectsBatchDeleter().WithClassName(class).WithWhere(where).WithOutput("minimal").
				WithConsistencyLevel(s.cfg.WriteConsistency).Do(ctx)
			return err
		})
		switch {
		case err != nil && retryable(err) && retries < batchAttempts-1 && ctx.Err() == nil:
			retries++
			if err := sleep(ctx, backoff(retries)); err != nil {
				return err
			}
			continue
		case err != nil:
			return s.writeError(err, what)
		case res == nil || res.Results == nil:
			return nil
		case res.Results.Failed > 0:
			return s.writeError(fmt.Errorf("%d of %d objects not deleted", res.Results.Failed, res.Results.Matches), what)
		case res.Results.Limit == 0 || res.Results.Matches <= res.Results.Limit:
			return nil
		}
	}
	return s.wrap(errors.New("still matching after many rounds"), what)
}

// Filters.

// idIs and idsIn filter on an id kept as text (see chunkProps).
func idIs(path string, v int64) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.Equal).WithValueText(idText(v))
}

func idsIn(path string, vs []int64) *filters.WhereBuilder {
	texts := make([]string, len(vs))
	for i, v := range vs {
		texts[i] = idText(v)
	}
	return filters.Where().WithPath([]string{path}).WithOperator(filters.ContainsAny).WithValueText(texts...)
}

func idText(v int64) string { return strconv.FormatInt(v, 10) }

// textInt is a number kept as text, read back.
type textInt int64

func (n *textInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	*n = textInt(v)
	return err
}

func hashesIn(hashes []string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{"hash"}).WithOperator(filters.ContainsAny).WithValueText(hashes...)
}

func idIn(ids []string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText(ids...)
}

func and(ws ...*filters.WhereBuilder) *filters.WhereBuilder {
	return filters.Where().WithOperator(filters.And).WithOperands(ws)
}

func or(ws ...*filters.WhereBuilder) *filters.WhereBuilder {
	if len(ws) == 1 {
		return ws[0]
	}
	return filters.Where().WithOperator(filters.Or).WithOperands(ws)
}

func textIs(path, v string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.Equal).WithValueText(v)
}
