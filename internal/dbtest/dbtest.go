// Package dbtest damages SQLite files on purpose, for the tests that check
// lore reports a damaged index or store instead of trusting it.
package dbtest

import (
	"database/sql"
	"os"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// PageSize is the page size of every database lore writes (SQLite's default).
const PageSize = 4096

// TablePages lists the pages (1-based) that hold table or index name, read
// with SQLite's dbstat table.
func TablePages(t testing.TB, db, name string) []int64 {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno`, name)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var pages []int64
	for rows.Next() {
		var p int64
		rows.Scan(&p)
		pages = append(pages, p)
	}
	if len(pages) == 0 {
		t.Fatalf("no pages for %s in %s", name, db)
	}
	return pages
}

// AllPages lists every page of a database file.
func AllPages(t testing.TB, db string) []int64 {
	t.Helper()
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	var pages []int64
	for p := int64(1); p <= fi.Size()/PageSize; p++ {
		pages = append(pages, p)
	}
	return pages
}

// SmashPages overwrites whole pages of a closed database with junk.
func SmashPages(t testing.TB, db string, pages []int64) {
	t.Helper()
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := []byte(strings.Repeat("\xde\xad\xbe\xef", PageSize/4))
	for _, p := range pages {
		if _, err := f.WriteAt(junk, (p-1)*PageSize); err != nil {
			t.Fatal(err)
		}
	}
}
