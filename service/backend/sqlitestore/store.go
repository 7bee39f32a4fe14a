package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/vesta-go/vesta/service/internal/segsql"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// FileName is the default file name, in the service's data directory.
const FileName = "segments.db"

// BusyTimeoutMillis is how long a statement waits for another connection
// or process to release the write lock.
const BusyTimeoutMillis = 5000

// Store is a segstore.Store on one SQLite file.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time // the clock of the period tags (SetNow)
}

var _ segstore.Store = (*Store)(nil)

// Open opens (creating it and its directory if needed) the SQLite file at
// path. It does not create the table: call Init.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("segment store sqlite: empty file path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("segment store sqlite: file path %q: '?' and '#' are not allowed", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("segment store sqlite: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeoutMillis))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("segment store sqlite: %s: %w", path, err)
	}
	// SQLite writes one transaction at a time anyway: one connection makes
	// this process's callers queue in Go, in order, instead of polling the
	// file lock with SQLite's busy handler.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("segment store sqlite: %s: %w", path, err)
	}
	return &Store{db: db, path: path, now: time.Now}, nil
}

// Path is the file the store uses.
func (s *Store) Path() string { return s.path }

// Init creates leaf_alloc and the period tags' tables if they do not
// exist.
func (s *Store) Init(ctx context.Context) error {
	for _, q := range append([]string{segsql.SchemaSQL}, segsql.PeriodSchemaSQL...) {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("segment store sqlite: creating the tables in %s: %w", s.path, err)
		}
	}
	return nil
}

// Tags lists every row, ordered by tag.
func (s *Store) Tags(ctx context.Context) ([]segstore.TagInfo, error) {
	rows, err := s.db.QueryContext(ctx, segsql.TagsSQL)
	if err != nil {
		return nil, fmt.Errorf("segment store sqlite: listing tags: %w", err)
	}
	defer rows.Close()
	var tags []segstore.TagInfo
	for rows.Next() {
		var t segstore.TagInfo
		var updated sql.NullTime
		if err := rows.Scan(&t.Tag, &t.MaxId, &t.Step, &t.Description, &updated); err != nil {
			return nil, fmt.Errorf("segment store sqlite: listing tags: %w", err)
		}
		t.UpdateTime = updated.Time
		tags = append(tags, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("segment store sqlite: listing tags: %w", err)
	}
	return tags, nil
}

// Alloc advances max_id by step (the row's step when step <= 0) in one
// BEGIN IMMEDIATE transaction and returns the new max_id and the row's
// step.
func (s *Store) Alloc(ctx context.Context, tag string, step int64) (maxId, dbStep int64, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("segment store sqlite: allocating for %q: %w", tag, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	q, args := segsql.AllocQuery(tag, step)
	err = tx.QueryRowContext(ctx, q, args...).Scan(&maxId, &dbStep)
	if errors.Is(err, sql.ErrNoRows) {
		var n int64
		if err = tx.QueryRowContext(ctx, segsql.ExistsSQL, tag).Scan(&n); err == nil {
			return 0, 0, segstore.AllocMiss(tag, n > 0)
		}
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return 0, 0, fmt.Errorf("segment store sqlite: allocating for %q: %w", tag, err)
	}
	return maxId, dbStep, nil
}

// CreateTag inserts a row, or returns segstore.ErrTagExists.
func (s *Store) CreateTag(ctx context.Context, t segstore.TagInfo) error {
	if err := t.Validate(); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, segsql.CreateTagSQL, t.Tag, t.MaxId, t.Step, t.Description)
	if err != nil {
		return fmt.Errorf("segment store sqlite: creating tag %q: %w", t.Tag, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return fmt.Errorf("segment store sqlite: creating tag %q: %w", t.Tag, err)
		}
		return fmt.Errorf("segment tag %q: %w", t.Tag, segstore.ErrTagExists)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }
