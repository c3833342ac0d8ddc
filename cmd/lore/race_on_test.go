//go:build race

package main

// raceEnabled: GoMLX's simplego executor (hugot's pure-Go backend) has a
// data race of its own when it runs a graph's ops in parallel
// (gomlx v0.26.0 backends/simplego/exec.go, noted in its comments), and
// hugot gives no way to ask for sequential execution. Tests that run it
// skip under -race; `make test` runs them again without it.
const raceEnabled = true
