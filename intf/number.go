package intf

import "context"

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
	// matches ErrUnavailable; a sequence past the format's width is an
	// error naming the tag, the period and the width; after Close,
	// ErrClosed.
	NextNumber(ctx context.Context, tag string) (SegmentNumber, error)
}
