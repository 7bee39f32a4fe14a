package rpcapp

import (
	"context"
	"errors"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/segopen"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
)

// Segments is the segment mode of one run (internal/server/segopen, as
// server-rest's): off, open, or — when its store could not be reached at
// start — being opened in the background, while SegmentNextIds answers
// intf.ErrUnavailable (code 6, on which clients try the next server). It
// is the intf.SegmentService the receiver serves.
type Segments struct {
	mode *segopen.Mode[*segment.Generator]
}

var (
	_ intf.SegmentNumberer = (*Segments)(nil)
	_ intf.SegmentRanger   = (*Segments)(nil)
	_ access.Stepper       = (*Segments)(nil) // a quota caps a range of the tag's step by it
)

// OpenSegments opens segment mode as configured (app.OpenSegments). Off
// is not an error: SegmentNextIds then answers rpcapi.ErrSegmentOff. A
// store that cannot be reached is not one either: it is retried in the
// background (only errors matching intf.ErrUnavailable are; any other is
// returned, to stop the start).
func OpenSegments(ctx context.Context, cfg config.Config) (*Segments, error) {
	return openSegments(ctx, func(ctx context.Context) (*segment.Generator, error) { return app.OpenSegments(ctx, cfg) },
		segopen.Options{Logger: cfg.Service.Logger})
}

// openSegments starts the segment mode open opens, with o's back-off and
// logger.
func openSegments(ctx context.Context, open segopen.OpenFunc[*segment.Generator], o segopen.Options) (*Segments, error) {
	o.Answer = "SegmentNextIds: code 6"
	s := &Segments{mode: segopen.New(open, o)}
	return s, s.mode.Start(ctx)
}

// NextIds serves the Generator, or says why there is none.
func (s *Segments) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	g, err := s.get()
	if err != nil {
		return nil, err
	}
	ids, err := g.NextIds(ctx, tag, n)
	return ids, s.mode.CallerError(err)
}

// NextRange hands out a range of the Generator (SegmentRange), or says
// why there is none.
func (s *Segments) NextRange(ctx context.Context, tag string, size int64) (intf.SegmentRange, error) {
	g, err := s.get()
	if err != nil {
		return intf.SegmentRange{}, err
	}
	r, err := g.NextRange(ctx, tag, size)
	return r, s.mode.CallerError(err)
}

// Step is the tag's own step in the Generator, or says why there is none.
func (s *Segments) Step(ctx context.Context, tag string) (int64, error) {
	g, err := s.get()
	if err != nil {
		return 0, err
	}
	step, err := g.Step(ctx, tag)
	return step, s.mode.CallerError(err)
}

// NextNumber serves a period tag's number of the Generator
// (SegmentNextNumber), or says why there is none.
func (s *Segments) NextNumber(ctx context.Context, tag string) (intf.SegmentNumber, error) {
	g, err := s.get()
	if err != nil {
		return intf.SegmentNumber{}, err
	}
	n, err := g.NextNumber(ctx, tag)
	return n, s.mode.CallerError(err)
}

// get is the Generator, or the error of a segment call while segment mode
// is not open (segopen.Mode.Get): off, the store being retried (only
// unavailable on the wire, without the retry's error: the client then
// tries the next server), or not open yet.
func (s *Segments) get() (*segment.Generator, error) {
	g, err := s.mode.Get()
	if errors.Is(err, segopen.ErrOff) {
		return nil, rpcapi.ErrSegmentOff
	}
	return g, s.mode.CallerError(err)
}

// Off tells whether segment mode is off.
func (s *Segments) Off() bool { return s != nil && s.mode.Off() }

// metrics is segment mode for the admin listener's metrics: nil while it
// is off or not open.
func (s *Segments) metrics() coremetrics.Segments {
	if s == nil {
		return nil
	}
	if g, ok := s.mode.Open(); ok {
		return g
	}
	return nil
}

// ReceiverOptions are the receiver's options of cfg: the call timeout,
// the range cap, and segment mode unless it is off.
func ReceiverOptions(cfg config.Config, s *Segments) []rpcapi.ReceiverOption {
	opts := []rpcapi.ReceiverOption{rpcapi.WithCallTimeout(cfg.CallTimeout), rpcapi.WithMaxRange(cfg.SegmentMaxRange)}
	if s != nil && !s.Off() {
		opts = append(opts, rpcapi.WithSegments(s))
	}
	return opts
}

// Close stops the retries and closes the Generator, if there is one.
func (s *Segments) Close() error {
	if s == nil {
		return nil
	}
	return s.mode.Close()
}
