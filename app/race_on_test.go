//go:build race

package app

// raceEnabled: GoMLX's simplego executor (hugot's pure-Go backend) races
// internally (see rerank/race_on_test.go). Tests that run it skip under
// -race; `make test` runs them again without it.
const raceEnabled = true
