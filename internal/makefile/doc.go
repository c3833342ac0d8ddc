// Package makefile holds no code: its tests run the repository's Makefile
// recipes with a stand-in for lore and for go, so that what `make run` and
// `make test` print and accept is checked like the rest of lore.
package makefile
