package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/lore-cli/lore/index"
	"github.com/lore-cli/lore/internal/sqlitex"
)

// errCorruptData is data SQLite reads back fine that lore could never have
// written (a vector of the wrong size).
var errCorruptData = errors.New("damaged data")

// isCorrupt reports whether err is SQLite telling that the database is
// damaged, or errCorruptData. FTS5 (in an index of format 1, before its
// upgrade) reports a damaged config record as a plain SQL error, so that
// one is recognised by its text.
func isCorrupt(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errCorruptData) {
		return true
	}
	// A value of another type than lore writes in its column (database/sql
	// cannot scan it) is a flipped byte in a record SQLite found well formed.
	msg := err.Error()
	return sqlitex.Damaged(err) || strings.Contains(msg, "invalid fts5 file format") || strings.Contains(msg, "sql: Scan error on column")
}

// damaged turns a SQLite error that means corruption into a DamagedError
// for index name; other errors (and nil) pass through unchanged.
func damaged(name string, err error) error {
	if err == nil || errors.Is(err, index.ErrCorrupt) || !isCorrupt(err) {
		return err
	}
	return &index.DamagedError{Index: name, Reason: sqliteReason(err), Err: err}
}

// sqliteReason is SQLite's message without the context lore added and the
// "(11)" code at its end: "database disk image is malformed".
func sqliteReason(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, `sql: Scan error on column index `); ok {
		if _, name, ok := strings.Cut(after, `name "`); ok {
			name, _, _ = strings.Cut(name, `"`)
			return "a value of the wrong type in column " + name
		}
	}
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		msg = coded.(error).Error()
	} else if _, after, ok := strings.Cut(msg, errCorruptData.Error()+": "); ok {
		msg = after
	}
	if i := strings.LastIndex(msg, " ("); i > 0 && strings.HasSuffix(msg, ")") {
		if _, err := strconv.Atoi(msg[i+2 : len(msg)-1]); err == nil {
			msg = msg[:i]
		}
	}
	if first, _, ok := strings.Cut(msg, "\n"); ok {
		msg = first
	}
	return msg
}

// quickCheck runs SQLite's PRAGMA quick_check: every b-tree page, record
// and index entry, without the slower cross-check of indexes against table
// rows. It returns a
// DamagedError naming the first problem, or nil.
func quickCheck(ctx context.Context, db *sql.DB, name string) error {
	return checkRows(ctx, db, name, `PRAGMA quick_check(1)`)
}

// checkRows runs one check pragma and turns its findings into a DamagedError.
func checkRows(ctx context.Context, db *sql.DB, name, pragma string) error {
	rows, err := db.QueryContext(ctx, pragma)
	if err != nil {
		return checkError(ctx, name, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return checkError(ctx, name, err)
		}
		problems = append(problems, s)
	}
	if err := rows.Err(); err != nil {
		return checkError(ctx, name, err)
	}
	if len(problems) == 1 && problems[0] == "ok" {
		return nil
	}
	reason := "quick_check found no result"
	for _, p := range problems {
		// Lines like "*** in database main ***" head the real findings.
		for _, line := range strings.Split(p, "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "***") {
				return &index.DamagedError{Index: name, Reason: "quick_check: " + line}
			}
		}
	}
	return &index.DamagedError{Index: name, Reason: reason}
}

// checkPages is quickCheck table by table: each ordinary table is checked
// page by page, so flipped bytes in any b-tree are found, at the cost of a
// no-change refresh. Damage inside a posting list that the b-trees cannot
// see is reported by the search that reads it (bm25.ErrFormat). (It was
// written to skip FTS5's own check, nine tenths of quickCheck's time when
// lore's keyword index was FTS5.)
func checkPages(ctx context.Context, db *sql.DB, name string) error {
	pageChecks.Add(1)
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'`)
	if err != nil {
		return checkError(ctx, name, err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return checkError(ctx, name, err)
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return checkError(ctx, name, err)
	}
	for _, t := range tables {
		if err := checkRows(ctx, db, name, `PRAGMA quick_check(`+quoteIdent(t)+`)`); err != nil {
			return err
		}
	}
	return nil
}

// pageChecks counts the whole-index checks, which tests of the writers
// that skip them read.
var pageChecks atomic.Int64

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// checkError is an error running the check itself: a cancellation stays
// one; anything else SQLite says while checking means the check failed.
func checkError(ctx context.Context, name string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if isCorrupt(err) || !isTransient(err) {
		return &index.DamagedError{Index: name, Reason: sqliteReason(err), Err: err}
	}
	return fmt.Errorf("check index: %w", err)
}

// isTransient reports SQLite errors that say nothing about the file's
// health: busy, locked, out of memory, interrupted, I/O.
func isTransient(err error) bool {
	code, ok := sqlitex.Code(err)
	if !ok {
		return true // not SQLite's: a context or driver error
	}
	switch code {
	case sqlitex.Busy, sqlitex.Locked, sqlitex.NoMem, sqlitex.Interrupt, sqlitex.IOErr:
		return true
	}
	return false
}

// A writing marker in a generation folder says a `lore index` has it open
// for writing; it holds that process's pid and is removed when the build
// closes the database. A marker whose process is gone means the last run
// did not end cleanly (a crash, a kill -9, a power cut): readers then run
// quickCheck before trusting the database.
const writingFile = "writing"

func markWriting(genDir string) error {
	return os.WriteFile(filepath.Join(genDir, writingFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

func clearWriting(genDir string) { os.Remove(filepath.Join(genDir, writingFile)) }

// staleWriter reports whether genDir holds a marker whose writer is gone,
// and the marker's contents.
func staleWriter(genDir string) (mark string, stale bool) {
	b, err := os.ReadFile(filepath.Join(genDir, writingFile))
	if err != nil {
		return "", false
	}
	mark = strings.TrimSpace(string(b))
	if pid, err := strconv.Atoi(mark); err == nil && pid > 0 && processAlive(pid) {
		return mark, false
	}
	return mark, true // gone, or died before writing its pid
}

// processAlive reports whether pid is a running process (this one
// included: the chat builds in-process).
func processAlive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// clearStaleWriter removes the marker after a passed check, unless a new
// writer has replaced it meanwhile.
func clearStaleWriter(genDir, mark string) {
	b, err := os.ReadFile(filepath.Join(genDir, writingFile))
	if err == nil && strings.TrimSpace(string(b)) == mark {
		os.Remove(filepath.Join(genDir, writingFile))
	}
}
