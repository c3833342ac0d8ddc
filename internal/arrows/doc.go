// Package arrows holds no code: its test asserts that lore's packages
// import one another only the way docs/ARCHITECTURE.md draws them, so
// that the map stays true as the code moves.
package arrows
