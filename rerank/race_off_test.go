//go:build !race

package rerank

const raceEnabled = false
