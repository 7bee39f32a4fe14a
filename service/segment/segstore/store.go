package segstore

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// Store keeps the leaf_alloc table: the storage contract of segment mode,
// implemented by pgstore (PostgreSQL) and sqlitestore (an embedded SQLite
// file). The table is Leaf's:
//
//	leaf_alloc(biz_tag VARCHAR(128) PRIMARY KEY, max_id BIGINT, step INT,
//	           description VARCHAR(256), update_time TIMESTAMP)
//
// max_id is the next ID no generator holds yet: every ID below it has been
// handed out (or skipped). Allocating a range of step IDs advances max_id by
// step in one statement and returns the new value; the range is
// [new max_id - step, new max_id). Implementations must be safe for
// concurrent use. Each method does its I/O under ctx.
type Store interface {
	// Init creates the table if it does not exist.
	Init(ctx context.Context) error
	// Tags lists every row, ordered by tag.
	Tags(ctx context.Context) ([]TagInfo, error)
	// Alloc advances the tag's max_id by step (by the row's own step when
	// step <= 0) in one atomic statement and returns the new max_id and the
	// row's step. The caller now owns [maxId - applied step, maxId).
	// Errors: intf.ErrUnknownTag when the row does not exist,
	// ErrMaxIdOverflow when max_id would pass math.MaxInt64.
	Alloc(ctx context.Context, tag string, step int64) (maxId, dbStep int64, err error)
	// CreateTag inserts a row: t.MaxId is the first ID to issue, t.Step
	// the row's step. ErrTagExists when the tag is already there (the row
	// is left as it is).
	CreateTag(ctx context.Context, t TagInfo) error
	// Close releases the connections.
	Close() error
}

// TagInfo is one leaf_alloc row.
type TagInfo struct {
	Tag string
	// MaxId is the next ID not yet allocated to any generator.
	MaxId int64
	// Step is the row's step: the size of a first range, and the floor of
	// the dynamic step.
	Step        int64
	Description string
	// UpdateTime is when the row last changed; zero when unknown.
	UpdateTime time.Time
}

// MaxDescriptionLen is the longest description of a row, in characters.
// (The largest row step is segspec.MaxDBStep.)
const MaxDescriptionLen = 256

// Store errors, beside intf.ErrUnknownTag.
var (
	// ErrTagExists: CreateTag found the tag already in the table.
	ErrTagExists = errors.New("segment tag already exists")
	// ErrMaxIdOverflow: advancing max_id by the step would pass
	// math.MaxInt64; the tag can issue no more ranges of that size.
	ErrMaxIdOverflow = errors.New("segment tag's max_id would overflow int64")
)

// Validate checks a row before it is created, naming the first bad field.
func (t TagInfo) Validate() error {
	// The name, step and first ID as a tag of segmentTags is checked.
	if err := (segspec.Tag{Tag: t.Tag, MaxId: t.MaxId, Step: t.Step}).Validate(); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(t.Description); n > MaxDescriptionLen {
		return fmt.Errorf("%w: description: %d characters, at most %d", intf.ErrInvalidArgument, n, MaxDescriptionLen)
	}
	return nil
}

// AllocMiss is the error for an Alloc that updated no row: exists says
// whether the tag's row is there (then the step would overflow max_id).
func AllocMiss(tag string, exists bool) error {
	if exists {
		return fmt.Errorf("segment tag %q: %w", tag, ErrMaxIdOverflow)
	}
	return fmt.Errorf("segment tag %q: %w", tag, intf.ErrUnknownTag)
}
