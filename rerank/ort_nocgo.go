//go:build !cgo

package rerank

import "fmt"

// ORTLibraryCandidates is empty: this build cannot load ONNX Runtime.
func ORTLibraryCandidates() []string { return nil }

func newORT(Options) (Reranker, error) { return nil, ORTAvailable("") }

// ORTAvailable says why ONNX Runtime cannot run here.
func ORTAvailable(string) error {
	return fmt.Errorf("%w: lore was built without cgo; rebuild with CGO_ENABLED=1 for ONNX Runtime", ErrUnavailable)
}

// ORTLoaded is empty: this build never loads ONNX Runtime.
func ORTLoaded() (lib, version string) { return "", "" }

// ORTCompiled reports whether this build can load ONNX Runtime at all.
func ORTCompiled() bool { return false }
