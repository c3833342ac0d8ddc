package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/wire"
)

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError writes OpenAI's error shape, which every OpenAI client turns
// into an exception carrying the message.
func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, wire.NewError(msg, typ, code))
}

// fail answers err from the engine with its status: 404 for an index that
// is not built, 429 when lore is busy, 499-style silence for a client that
// left, 500 for the rest (with the engine's one-line reason).
func fail(w http.ResponseWriter, err error) {
	status, typ, code := classify(err)
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, status, typ, code, err.Error())
}

// classify maps an engine error to an HTTP status and OpenAI's error type
// and code.
func classify(err error) (status int, typ, code string) {
	switch {
	case errors.Is(err, app.ErrBusy):
		return http.StatusTooManyRequests, "rate_limit_error", "busy"
	case errors.Is(err, index.ErrNoIndex):
		return http.StatusNotFound, "not_found_error", "index_not_found"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "server_error", "cancelled"
	case errors.Is(err, index.ErrCorrupt), errors.Is(err, index.ErrOldFormat):
		return http.StatusServiceUnavailable, "server_error", "index_unusable"
	}
	return http.StatusInternalServerError, "server_error", "internal_error"
}

// bodyError answers a body that could not be read or decoded: 413 past the
// cap, 400 otherwise.
func bodyError(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body_too_large",
			"the request body is larger than this server accepts (serve-max-body): send a shorter conversation")
		return
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "the request body is not valid JSON: "+err.Error())
}
