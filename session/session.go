// Package session keeps conversations: every `lore ask` turn and chat turn
// is saved with its sources and route, so a follow-up can continue it and
// `lore sessions` can show it. Only what the user asked and what lore
// answered is stored; no configuration, so no secret can end up here.
package session

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lore-cli/lore/internal/sqlitex"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

const schema = `
CREATE TABLE IF NOT EXISTS sessions(
	id TEXT PRIMARY KEY,
	title TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS turns(
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	n INTEGER NOT NULL,
	question TEXT NOT NULL,
	standalone TEXT NOT NULL,
	answer TEXT NOT NULL,
	route TEXT NOT NULL,
	mode TEXT NOT NULL,
	model TEXT NOT NULL,
	sources TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY(session_id, n)
);`

// migrate adds what older stores lack: the index a turn was asked on, and
// whether its answer was cut short by a cancel. Two processes may open an
// old store at once: the loser of the race finds the column added.
func migrate(db *sql.DB) error {
	for _, col := range []struct{ name, decl string }{
		{"index_name", "TEXT NOT NULL DEFAULT ''"},
		{"cancelled", "INTEGER NOT NULL DEFAULT 0"},
	} {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info('turns') WHERE name = ?`, col.name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		if _, err := db.Exec(`ALTER TABLE turns ADD COLUMN ` + col.name + ` ` + col.decl); err != nil && !strings.Contains(err.Error(), "duplicate column") {
			return err
		}
	}
	return nil
}

// ErrNotFound means no session has that id.
var ErrNotFound = errors.New("no such session")

// Source is what a turn cited or could have cited.
type Source struct {
	N       int    `json:"n"`
	Label   string `json:"label"`
	Root    string `json:"source,omitempty"` // the indexed folder Path is relative to
	Path    string `json:"path,omitempty"`
	Start   int    `json:"start_line,omitempty"`
	End     int    `json:"end_line,omitempty"`
	Heading string `json:"heading,omitempty"`
	URL     string `json:"url,omitempty"`
	Title   string `json:"title,omitempty"`
	Cited   bool   `json:"cited"`
}

// Turn is one question and its answer.
type Turn struct {
	N          int      `json:"n"`
	Question   string   `json:"question"`
	Standalone string   `json:"standalone_query"`
	Answer     string   `json:"answer"`
	Route      string   `json:"route"`
	Mode       string   `json:"mode"`
	Model      string   `json:"model"`
	Sources    []Source `json:"sources"`
	// Index is the index the turn was asked on ("" for turns saved before
	// lore recorded it).
	Index string `json:"index,omitempty"`
	// Cancelled is set when the answer was cut short (Ctrl+C, Esc): Answer
	// is what streamed until then.
	Cancelled bool      `json:"cancelled,omitempty"`
	Created   time.Time `json:"created_at"`
}

// Session is a conversation.
type Session struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Created time.Time `json:"created_at"`
	Updated time.Time `json:"updated_at"`
	// Index is the index of the session's last turn ("" when unknown).
	Index string `json:"index,omitempty"`
	Turns []Turn `json:"turns,omitempty"`
}

// Store is the sessions database.
type Store struct {
	db   *sql.DB
	path string
	file os.FileInfo // the file opened, to see it removed or replaced
}

// Open opens (creating) the sessions database at path.
func Open(path string) (*Store, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(ON)")
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		if sqlitex.Damaged(err) {
			return nil, damaged(path, err)
		}
		return nil, fmt.Errorf("open sessions %s: %w", path, err)
	}
	if err := migrate(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sessions %s: %w", path, err)
	}
	// The file is small; a quick check costs milliseconds and keeps a
	// damaged page from surfacing later as a lost or garbled history.
	var check string
	if err := db.QueryRow(`PRAGMA quick_check`).Scan(&check); err != nil || check != "ok" {
		db.Close()
		if err == nil {
			err = errors.New(check)
		}
		return nil, damaged(path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open sessions %s: %w", path, err)
	}
	return &Store{db: db, path: path, file: fi}, nil
}

// Replaced reports whether the file at the store's path is gone or is
// another file than the one opened (deleted, or moved aside and recreated,
// while lore ran): what is saved then would go to a file nobody can open
// again. Reopen the store.
func (s *Store) Replaced() bool {
	fi, err := os.Stat(s.path)
	return err != nil || !os.SameFile(fi, s.file)
}

// ErrDamaged means the sessions file is not a sound database.
var ErrDamaged = errors.New("the sessions store is damaged")

func damaged(path string, err error) error {
	return fmt.Errorf("%w: %s (%v): move it aside to start a new one: mv %s %s.damaged", ErrDamaged, path, err, path, path)
}

func (s *Store) Close() error { return s.db.Close() }

// NewID returns a short random session id.
func NewID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Append saves a turn, creating the session on its first turn.
func (s *Store) Append(ctx context.Context, id string, t Turn) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := time.Now()
	title := t.Question
	if len(title) > 80 {
		cut := 80
		for cut > 0 && !utf8.RuneStart(title[cut]) {
			cut-- // on a character, not inside one
		}
		title = title[:cut] + "…"
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions(id, title, created_at, updated_at) VALUES(?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at`, id, title, now.Unix(), now.Unix()); err != nil {
		return 0, err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(n), 0) + 1 FROM turns WHERE session_id = ?`, id).Scan(&n); err != nil {
		return 0, err
	}
	src, _ := json.Marshal(t.Sources)
	if _, err := tx.ExecContext(ctx, `INSERT INTO turns(session_id, n, question, standalone, answer, route, mode, model, sources, index_name, cancelled, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, n, t.Question, t.Standalone, t.Answer, t.Route, t.Mode, t.Model, string(src), t.Index, t.Cancelled, now.Unix()); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// Get returns a session with its turns.
func (s *Store) Get(ctx context.Context, id string) (Session, error) {
	var se Session
	var created, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT id, title, created_at, updated_at FROM sessions WHERE id = ?`, id).Scan(&se.ID, &se.Title, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return se, fmt.Errorf("%w %q: see `lore sessions list`", ErrNotFound, id)
	}
	if err != nil {
		return se, err
	}
	se.Created, se.Updated = time.Unix(created, 0), time.Unix(updated, 0)
	rows, err := s.db.QueryContext(ctx, `SELECT n, question, standalone, answer, route, mode, model, sources, index_name, cancelled, created_at FROM turns WHERE session_id = ? ORDER BY n`, id)
	if err != nil {
		return se, err
	}
	defer rows.Close()
	for rows.Next() {
		var t Turn
		var src string
		var at int64
		if err := rows.Scan(&t.N, &t.Question, &t.Standalone, &t.Answer, &t.Route, &t.Mode, &t.Model, &src, &t.Index, &t.Cancelled, &at); err != nil {
			return se, err
		}
		json.Unmarshal([]byte(src), &t.Sources)
		t.Created = time.Unix(at, 0)
		se.Turns = append(se.Turns, t)
		se.Index = t.Index
	}
	return se, rows.Err()
}

// List returns the sessions, most recent first, without their turns.
func (s *Store) List(ctx context.Context) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, title, created_at, updated_at,
		coalesce((SELECT index_name FROM turns WHERE session_id = sessions.id ORDER BY n DESC LIMIT 1), '')
		FROM sessions ORDER BY updated_at DESC, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var se Session
		var c, u int64
		if err := rows.Scan(&se.ID, &se.Title, &c, &u, &se.Index); err != nil {
			return nil, err
		}
		se.Created, se.Updated = time.Unix(c, 0), time.Unix(u, 0)
		out = append(out, se)
	}
	return out, rows.Err()
}

// Removed is what Remove deleted, so that the user is told.
type Removed struct {
	ID    string
	Title string // the first question, as List shows it
	Turns int
}

// Remove deletes a session and its turns.
func (s *Store) Remove(ctx context.Context, id string) (Removed, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Removed{}, err
	}
	defer tx.Rollback()
	r := Removed{ID: id}
	err = tx.QueryRowContext(ctx, `SELECT title, (SELECT count(*) FROM turns WHERE session_id = ?) FROM sessions WHERE id = ?`, id, id).Scan(&r.Title, &r.Turns)
	if errors.Is(err, sql.ErrNoRows) {
		return Removed{}, fmt.Errorf("%w %q: see `lore sessions list`", ErrNotFound, id)
	}
	if err != nil {
		return Removed{}, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
		return Removed{}, err
	}
	return r, tx.Commit()
}
