package wire

import (
	"context"
	"errors"
	"net/http"

	"github.com/lore-cli/lore/app"
	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/session"
)

// Error is the body of a failed request, in OpenAI's error shape so that
// OpenAI clients read it: {"error": {"message", "type", "code"}}. `lore
// serve` answers it with ErrorType.HTTPStatus; `lore mcp` puts it in an
// isError result.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is what went wrong: a message for people, a Type for programs
// that handle a class of errors and a Code for the one case.
type ErrorBody struct {
	Message string    `json:"message"`
	Type    ErrorType `json:"type"`
	Code    string    `json:"code"` // snake_case, e.g. "index_not_found"
}

// ErrorType is the class of an Error, as OpenAI names them.
type ErrorType string

// The error types lore answers with.
const (
	InvalidRequest ErrorType = "invalid_request_error" // the request is malformed or names a bad value
	Authentication ErrorType = "authentication_error"  // no key, or a wrong one
	NotFound       ErrorType = "not_found_error"       // no such index, session or route
	RateLimit      ErrorType = "rate_limit_error"      // too many requests at once: retry later
	ServerError    ErrorType = "server_error"          // lore or a service behind it failed
)

// HTTPStatus is the status code a server answers an error of type t with.
func (t ErrorType) HTTPStatus() int {
	switch t {
	case InvalidRequest:
		return http.StatusBadRequest
	case Authentication:
		return http.StatusUnauthorized
	case NotFound:
		return http.StatusNotFound
	case RateLimit:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// NewError is an Error of type t with code and message.
func NewError(t ErrorType, code, message string) Error {
	return Error{Error: ErrorBody{Message: message, Type: t, Code: code}}
}

// ErrorFrom is err as an Error: the type and code of the errors that
// callers can act on, else a server_error with code "internal". The
// message is err's own text.
func ErrorFrom(err error) Error {
	t, code := ServerError, "internal"
	switch {
	case errors.Is(err, app.ErrBusy):
		t, code = RateLimit, "busy"
	case errors.Is(err, index.ErrNoIndex):
		t, code = NotFound, "index_not_found"
	case errors.Is(err, index.ErrNotIndexed):
		t, code = NotFound, "not_indexed"
	case errors.Is(err, session.ErrNotFound):
		t, code = NotFound, "session_not_found"
	case errors.Is(err, app.ErrSessionIndex):
		t, code = InvalidRequest, "session_of_another_index"
	case errors.Is(err, index.ErrNoSources):
		t, code = InvalidRequest, "no_sources"
	case errors.Is(err, index.ErrBadSource):
		t, code = InvalidRequest, "bad_source"
	case errors.Is(err, index.ErrCorrupt):
		code = "index_damaged"
	case errors.Is(err, context.DeadlineExceeded):
		code = "timeout"
	case errors.Is(err, context.Canceled):
		code = "cancelled"
	}
	return NewError(t, code, err.Error())
}
