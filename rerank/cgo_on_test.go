//go:build cgo

package rerank

const cgoEnabled = true
