package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// TokenCheck reports whether a request carries token as "Authorization:
// Bearer TOKEN" (the scheme in any case); with no token every request
// passes. lore serve and lore mcp's HTTP transport share it.
func TokenCheck(token string) func(*http.Request) bool {
	if token == "" {
		return func(*http.Request) bool { return true }
	}
	// Comparing digests keeps the comparison constant-time whatever the
	// length of what a client sends.
	want := sha256.Sum256([]byte(token))
	return func(r *http.Request) bool {
		scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return false
		}
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		return subtle.ConstantTimeCompare(sum[:], want[:]) == 1
	}
}
