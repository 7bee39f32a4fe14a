package intf

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SegmentNumber is one business number of a period tag (segment mode's
// numbers grouped by period): Text is the number formatted as the tag's
// format says ("ORD20261127000123"), Period the period it belongs to
// ("20261127" for a day, "202611" for a month, "2026" for a year, in
// UTC) and Seq its sequence in that period, from 1. Text is unique per
// tag across periods, instances and restarts.
type SegmentNumber struct {
	Text   string `json:"number"`
	Period string `json:"period"`
	Seq    int64  `json:"seq"`
}

// SegmentNumberer issues the numbers of period tags.
type SegmentNumberer interface {
	// NextNumber returns the tag's next number in the current period.
	// Errors: a malformed tag matches ErrInvalidArgument; a tag that is
	// not a period tag matches ErrUnknownTag; no number can be served
	// while the database is unreachable (or a period is just ending)
	// matches ErrUnavailable; a period whose numbers are used up (its
	// sequence would pass the format's {seq:N}) matches
	// ErrPeriodExhausted, a *PeriodExhaustedError naming the tag, the
	// period and the width; after Close, ErrClosed.
	NextNumber(ctx context.Context, tag string) (SegmentNumber, error)
}

// ErrPeriodExhausted: a period tag has issued the last number its
// format's {seq:N} can write in the current period. Numbers are never
// wrapped: the tag issues none until the next period (by the database's
// clock), on any server. Not the caller's fault, and no retry helps
// before the period ends; widen the format.
var ErrPeriodExhausted = errors.New("period's numbers used up: the sequence outgrew its format's width")

// PeriodExhaustedError is the ErrPeriodExhausted of one tag and period.
type PeriodExhaustedError struct {
	Tag    string
	Period string // the period's key: "20261127", "202611" or "2026"
	Width  int    // N of the format's {seq:N}
	Max    int64  // the largest sequence it writes: 10^N-1
	// Ends is the period's end (UTC): the next period's numbers are
	// served once the database's clock has passed it. RetryAfter is about
	// how long that was from when the error was made (0 when unknown).
	Ends       time.Time
	RetryAfter time.Duration
}

func (e *PeriodExhaustedError) Error() string {
	return fmt.Sprintf("period tag %q: period %s has used up its numbers ({seq:%d} writes at most %d): none until the next period, from %s; widen the format's {seq:N}",
		e.Tag, e.Period, e.Width, e.Max, e.Ends.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrPeriodExhausted) true.
func (e *PeriodExhaustedError) Is(target error) bool { return target == ErrPeriodExhausted }
