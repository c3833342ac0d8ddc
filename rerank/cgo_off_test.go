//go:build !cgo

package rerank

// Without cgo there is no ONNX Runtime, whatever library is on disk.
const cgoEnabled = false
