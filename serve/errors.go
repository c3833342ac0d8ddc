package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/wire"
)

// jsonWriteTimeout bounds the write of a whole JSON reply: a client that
// never reads it does not hold the connection for ever. It starts when the
// reply is ready, not with the request, so a slow answer is not cut.
const jsonWriteTimeout = time.Minute

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(jsonWriteTimeout))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// writeError writes OpenAI's error shape, which every OpenAI client turns
// into an exception carrying the message.
func writeError(w http.ResponseWriter, status int, typ wire.ErrorType, code, msg string) {
	writeJSON(w, status, wire.NewError(typ, code, msg))
}

// fail answers err from the engine in OpenAI's shape with its status:
// 404 for an index that is not built, 429 with Retry-After when lore is
// busy, 503 for an index that cannot be used now, 500 for the rest (with
// the engine's one-line reason).
func (s *Server) fail(w http.ResponseWriter, err error) {
	e, status := classify(err)
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", s.answers.retryAfter())
	}
	writeJSON(w, status, e)
}

// failOn is fail for a request on index ix ("" the default): the default
// index not built yet means the server is not ready (503, as /readyz says),
// not that the client named something that does not exist.
func (s *Server) failOn(w http.ResponseWriter, ix string, err error) {
	if ix == "" && errors.Is(err, index.ErrNoIndex) {
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusServiceUnavailable, wire.ServerError, "not_ready", err.Error())
		return
	}
	s.fail(w, err)
}

// classify is err as wire's Error and the HTTP status to answer it with.
func classify(err error) (wire.Error, int) {
	if errors.Is(err, errQueueTimeout) {
		return wire.NewError(wire.RateLimit, "queue_timeout", err.Error()), http.StatusTooManyRequests
	}
	if errors.Is(err, errShuttingDown) {
		return wire.NewError(wire.ServerError, "server_shutting_down", err.Error()), http.StatusServiceUnavailable
	}
	e := wire.ErrorFrom(err)
	if errors.Is(err, index.ErrCorrupt) || errors.Is(err, index.ErrOldFormat) || errors.Is(err, index.ErrLocked) {
		return e, http.StatusServiceUnavailable // the index cannot be used now: not the client's fault
	}
	return e, e.Error.Type.HTTPStatus()
}

const bodyTooLarge = "the request body is larger than this server accepts (serve-max-body): send a shorter conversation"

// bodyError answers a body that could not be read or decoded: 413 past the
// cap, 400 otherwise.
func bodyError(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, wire.InvalidRequest, "body_too_large", bodyTooLarge)
		return
	}
	writeError(w, http.StatusBadRequest, wire.InvalidRequest, "invalid_json", "the request body is not valid JSON: "+err.Error())
}

// decodeBody reads the request's body as exactly one JSON value into v.
// Anything after it (a second object, stray bytes) is refused: a client
// that sent it is not getting the answer it thinks it asked for. The body
// is read whole into a buffer of its declared length (capped by route):
// a decoder's growing buffer cost twice that again for a large one.
func decodeBody(r *http.Request, v any) error {
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+1))
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return err
	}
	err := json.Unmarshal(buf.Bytes(), v)
	if err == nil {
		return nil
	}
	// Unmarshal refuses trailing data as a syntax error: say so plainly
	// when the body starts with a whole value.
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	var first json.RawMessage
	if dec.Decode(&first) == nil && dec.InputOffset() < int64(buf.Len()) {
		if _, terr := dec.Token(); terr == nil {
			return errors.New("more than one JSON value: send one JSON object and nothing after it")
		}
		return fmt.Errorf("%w: send one JSON object and nothing after it", err)
	}
	return err
}
