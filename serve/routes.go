package serve

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/config"
	"github.com/lore-cli/lore/wire"
)

// maxK bounds a search's k: a client asking for a million passages gets
// the most any reader would use.
const maxK = 100

// searchRequest is the body of POST /v1/search.
type searchRequest struct {
	Query  string `json:"query"`
	Index  string `json:"index"`
	K      int    `json:"k"`
	Rerank *bool  `json:"rerank"`
}

// search answers POST /v1/search in the shape of `lore search --json`.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	var req searchRequest
	// r.Body is capped by route (serve-max-body): past it, 413.
	if err := decodeBody(r, &req); err != nil {
		bodyError(w, err)
		return
	}
	switch {
	case strings.TrimSpace(req.Query) == "":
		writeError(w, http.StatusBadRequest, wire.InvalidRequest, "missing_query", `query: empty: send {"query": "..."}`)
		return
	case req.K < 0 || req.K > maxK:
		writeError(w, http.StatusBadRequest, wire.InvalidRequest, "invalid_k", "k: must be between 1 and 100 (0 or absent: the server's top-k)")
		return
	case req.Index != "" && config.CheckIndexName(req.Index) != nil:
		writeError(w, http.StatusBadRequest, wire.InvalidRequest, "invalid_index", "index: "+config.CheckIndexName(req.Index).Error())
		return
	}
	in := info(r)
	in.index, in.question = s.indexName(req.Index), req.Query
	res, err := s.eng.Search(r.Context(), app.SearchRequest{Index: req.Index, Query: req.Query, K: req.K,
		Stages: app.Stages{NoRerank: req.Rerank != nil && !*req.Rerank}})
	if err != nil {
		s.failOn(w, req.Index, err)
		return
	}
	for stage, d := range res.Timings {
		s.metrics.stage(stage, d)
	}
	s.metrics.stage("rerank", res.Rerank)
	writeJSON(w, http.StatusOK, wire.NewSearch(req.Query, s.indexName(req.Index), res))
}

// models answers GET /v1/models: lore and lore-online on the default
// index, then both modes of every built index by name.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	list, err := s.eng.ListIndexes(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	out := modelList{Object: "list", Data: []model{}}
	add := func(ix string, built *time.Time) {
		created := int64(0)
		if built != nil {
			created = built.Unix()
		}
		for _, mode := range []string{"offline", "online"} {
			out.Data = append(out.Data, model{ID: modelName(mode, ix), Object: "model", Created: created, OwnedBy: "lore"})
		}
	}
	add("", nil)
	for _, in := range list {
		if !in.Built || in.Damaged != "" {
			continue
		}
		if in.Name == s.eng.DefaultIndex() && in.BuiltAt != nil {
			out.Data[0].Created, out.Data[1].Created = in.BuiltAt.Unix(), in.BuiltAt.Unix()
		}
		add(in.Name, in.BuiltAt)
	}
	writeJSON(w, http.StatusOK, out)
}

// model answers GET /v1/models/{id}: the entry /v1/models lists under
// that id, or 404 in OpenAI's shape (clients' models.retrieve).
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	mode, ix, err := parseModel(id)
	if err == nil && id == "" {
		err = fmt.Errorf("model \"\" does not exist: use lore, lore-online, lore:INDEX or lore-online:INDEX (GET /v1/models lists them)")
	}
	if err != nil {
		writeError(w, http.StatusNotFound, wire.InvalidRequest, "model_not_found", err.Error())
		return
	}
	list, err := s.eng.ListIndexes(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	want := s.indexName(ix)
	for _, in := range list {
		if in.Name != want || (ix != "" && (!in.Built || in.Damaged != "")) {
			continue
		}
		created := int64(0)
		if in.BuiltAt != nil {
			created = in.BuiltAt.Unix()
		}
		writeJSON(w, http.StatusOK, model{ID: modelName(mode, ix), Object: "model", Created: created, OwnedBy: "lore"})
		return
	}
	if ix == "" {
		// lore and lore-online are always listed: they answer 503 until
		// the default index is built, as /readyz says.
		writeJSON(w, http.StatusOK, model{ID: modelName(mode, ix), Object: "model", OwnedBy: "lore"})
		return
	}
	writeError(w, http.StatusNotFound, wire.InvalidRequest, "model_not_found",
		fmt.Sprintf("model %q does not exist: index %s is not built (lore index list shows the indexes; GET /v1/models lists the models)", id, want))
}

// indexes answers GET /v1/indexes in the shape of `lore index list --json`.
func (s *Server) indexes(w http.ResponseWriter, r *http.Request) {
	list, err := s.eng.ListIndexes(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": wire.NewIndexList(list)})
}

// healthz says the process is up.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz says whether the default index opens (503 if not) and how Ollama
// is: without it lore still searches and lists sources, so it is reported,
// not fatal.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	out := map[string]any{"status": "ready", "index": s.eng.DefaultIndex(), "ollama": "ok"}
	status := http.StatusOK
	if info, err := s.eng.IndexInfo(ctx, ""); err != nil || !info.Built {
		status, out["status"] = http.StatusServiceUnavailable, "not ready"
		if err != nil {
			out["problem"] = err.Error()
		} else {
			out["problem"] = "index " + s.eng.DefaultIndex() + " is not built: run lore index PATH"
		}
	}
	if err := s.eng.OllamaStatus(ctx); err != nil {
		out["ollama"] = err.Error()
	}
	writeJSON(w, status, out)
}
