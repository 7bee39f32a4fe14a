package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vesta-go/vesta/service/segment"
)

// Store is a segment.Store on a pgx pool.
type Store struct {
	pool *pgxpool.Pool
}

var _ segment.Store = (*Store)(nil)

// ParseDSN checks a PostgreSQL DSN, a URL (postgres://user@host/db) or
// key=value pairs (host=... dbname=...), without connecting. Its error
// never repeats the password.
func ParseDSN(dsn string) (*pgxpool.Config, error) {
	if dsn == "" {
		return nil, errors.New("segment store postgres: empty DSN")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("segment store postgres: %w", err)
	}
	return cfg, nil
}

// DefaultConnectTimeout bounds each new connection when the DSN sets no
// connect_timeout (pgx has none by default: a silent host would hold a
// connection attempt until the kernel gives up, minutes later).
const DefaultConnectTimeout = 5 * time.Second

// Open connects to dsn and checks the connection with a ping. It does not
// create the table: call Init.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("segment store postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("segment store postgres: connecting to %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	return &Store{pool: pool}, nil
}

// Init creates leaf_alloc if it does not exist.
func (s *Store) Init(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, segment.SchemaSQL); err != nil {
		return fmt.Errorf("segment store postgres: creating leaf_alloc: %w", err)
	}
	return nil
}

// Tags lists every row, ordered by tag.
func (s *Store) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	rows, err := s.pool.Query(ctx, segment.TagsSQL)
	if err != nil {
		return nil, fmt.Errorf("segment store postgres: listing tags: %w", err)
	}
	var tags []segment.TagInfo
	for rows.Next() {
		var t segment.TagInfo
		var updated *time.Time
		if err := rows.Scan(&t.Tag, &t.MaxId, &t.Step, &t.Description, &updated); err != nil {
			rows.Close()
			return nil, fmt.Errorf("segment store postgres: listing tags: %w", err)
		}
		if updated != nil {
			t.UpdateTime = *updated
		}
		tags = append(tags, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("segment store postgres: listing tags: %w", err)
	}
	return tags, nil
}

// Alloc advances max_id by step (the row's step when step <= 0) with one
// UPDATE ... RETURNING and returns the new max_id and the row's step.
func (s *Store) Alloc(ctx context.Context, tag string, step int64) (maxId, dbStep int64, err error) {
	q, args := segment.AllocQuery(tag, step)
	err = s.pool.QueryRow(ctx, q, args...).Scan(&maxId, &dbStep)
	if errors.Is(err, pgx.ErrNoRows) {
		var n int64
		if err = s.pool.QueryRow(ctx, segment.ExistsSQL, tag).Scan(&n); err == nil {
			return 0, 0, segment.AllocMiss(tag, n > 0)
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("segment store postgres: allocating for %q: %w", tag, err)
	}
	return maxId, dbStep, nil
}

// CreateTag inserts a row, or returns segment.ErrTagExists.
func (s *Store) CreateTag(ctx context.Context, t segment.TagInfo) error {
	if err := t.Validate(); err != nil {
		return err
	}
	ct, err := s.pool.Exec(ctx, segment.CreateTagSQL, t.Tag, t.MaxId, t.Step, t.Description)
	if err != nil {
		return fmt.Errorf("segment store postgres: creating tag %q: %w", t.Tag, err)
	}
	if ct.RowsAffected() == 0 {
		return fmt.Errorf("segment tag %q: %w", t.Tag, segment.ErrTagExists)
	}
	return nil
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
