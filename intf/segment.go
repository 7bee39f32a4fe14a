package intf

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// SegmentService issues segment-mode IDs (Leaf-segment style): short, dense,
// strictly increasing numbers per business tag ("order", "invoice"), taken
// from number ranges a database hands out. Unlike IdService's IDs they carry
// no time, machine or type fields: they are plain counters.
//
// IDs of one tag are strictly increasing in the order one service instance
// issues them, and unique across every instance that shares the database.
// They are dense but not gapless: a restart or a failed batch skips the rest
// of a range.
type SegmentService interface {
	// NextIds returns n IDs of tag, 1 <= n <= MaxBatch, in increasing
	// order. Errors: a malformed tag or n out of range matches
	// ErrInvalidArgument (see CheckTag, CheckRange); a tag the
	// database does not know matches ErrUnknownTag; no range left in memory
	// while the database is unreachable matches ErrUnavailable; after Close,
	// ErrClosed.
	NextIds(ctx context.Context, tag string, n int) ([]int64, error)
}

// ErrUnknownTag: the segment tag does not exist in the database (create it
// first, e.g. with vesta-segment create-tag).
var ErrUnknownTag = errors.New("unknown segment tag")

// MaxTagLen is the longest segment tag, in bytes (leaf_alloc.biz_tag is a
// VARCHAR(128)).
const MaxTagLen = 128

// TagError says why a segment tag name is malformed. It matches
// ErrInvalidArgument under errors.Is.
type TagError struct {
	Tag    string
	Reason string
}

func (e *TagError) Error() string {
	return fmt.Sprintf("invalid argument: tag %q: %s", e.Tag, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidArgument) true.
func (e *TagError) Is(target error) bool { return target == ErrInvalidArgument }

// CheckTag accepts 1 to MaxTagLen bytes of ASCII letters, digits, '.', '_'
// and '-', so a tag is safe in a URL path, a shell and a config list.
func CheckTag(tag string) error {
	if tag == "" {
		return &TagError{Tag: tag, Reason: "empty"}
	}
	if len(tag) > MaxTagLen {
		return &TagError{Tag: tag, Reason: fmt.Sprintf("longer than %d bytes", MaxTagLen)}
	}
	for i := 0; i < len(tag); i++ {
		if !tagByte(tag[i]) {
			r, _ := utf8.DecodeRuneInString(tag[i:]) // name the character, not its first byte
			return &TagError{Tag: tag, Reason: fmt.Sprintf("character %q not allowed: use ASCII letters, digits, '.', '_' and '-'", r)}
		}
	}
	return nil
}

func tagByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// MaxRange is the largest range handed out whole (SegmentRanger) a server
// may allow: a tag row's step is a 32-bit INT, and so is a range.
const MaxRange = 1<<31 - 1

// SegmentRange is a range of segment IDs handed out whole: Start..End-1.
// A client that holds one serves its IDs itself; nobody else ever gets
// them, even when the client dies holding it (its rest is a gap).
type SegmentRange struct {
	Start, End int64
}

// Size is the number of IDs in r.
func (r SegmentRange) Size() int64 { return r.End - r.Start }

// SegmentRanger hands out whole ranges of a tag, allocated from the
// database like the servers' own segments.
type SegmentRanger interface {
	// NextRange allocates size IDs of tag; size 0 asks for the tag's own
	// step (its row's step). Errors as NextIds, and a size out of range
	// is a *FieldError named "size".
	NextRange(ctx context.Context, tag string, size int64) (SegmentRange, error)
}
