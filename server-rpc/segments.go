package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/app"
	"github.com/vesta-go/vesta/internal/coremetrics"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/rpcapi"
	"github.com/vesta-go/vesta/service/config"
	"github.com/vesta-go/vesta/service/segment"
)

// The back-off of reopening a segment store that could not be reached at
// start (as server-rest's): 1 s, doubling, at most 30 s.
const (
	segmentRetryMin = time.Second
	segmentRetryMax = 30 * time.Second
)

// segments is the segment mode of one run: off, open, or — when its store
// could not be reached at start — being opened in the background, while
// SegmentNextIds answers intf.ErrUnavailable (code 6, on which clients
// try the next server). It is the intf.SegmentService the receiver serves.
type segments struct {
	off  bool
	g    atomic.Pointer[segment.Generator]
	down atomic.Pointer[string] // why the store is not open yet, while retrying

	open     func(context.Context) (*segment.Generator, error)
	log      *slog.Logger
	min, max time.Duration
	stop     context.CancelFunc
	done     chan struct{} // closed when the retries end
}

// openSegments opens segment mode as configured (app.OpenSegments). Off
// is not an error: SegmentNextIds then answers rpcapi.ErrSegmentOff. A
// store that cannot be reached is not one either: it is retried in the
// background (only errors matching intf.ErrUnavailable are; any other is
// returned, to stop the start).
func openSegments(ctx context.Context, cfg config.Config) (*segments, error) {
	s := &segments{
		open: func(ctx context.Context) (*segment.Generator, error) { return app.OpenSegments(ctx, cfg) },
		log:  cfg.Service.Logger, min: segmentRetryMin, max: segmentRetryMax,
	}
	return s, s.start(ctx)
}

// start makes the first attempt and, for an unreachable store, starts the
// retries.
func (s *segments) start(ctx context.Context) error {
	if s.log == nil {
		s.log = slog.Default()
	}
	g, err := s.open(ctx)
	switch {
	case err == nil && g == nil:
		s.off = true
		return nil
	case err == nil:
		s.g.Store(g)
		return nil
	case !errors.Is(err, intf.ErrUnavailable) || ctx.Err() != nil:
		return err
	}
	s.setDown(err)
	s.log.Warn("vesta: segment store unreachable at start: serving IDs; segment calls answer unavailable (SegmentNextIds: code 6) and the store is retried in the background",
		"err", err, "firstRetry", s.min, "maxWait", s.max)
	bg, stop := context.WithCancel(context.Background())
	s.stop, s.done = stop, make(chan struct{})
	go s.retry(bg)
	return nil
}

// retry opens the store until it opens or close: after min, then after
// twice the wait before, up to max. The log says when it opens; each
// failure in between only at debug level.
func (s *segments) retry(ctx context.Context) {
	defer close(s.done)
	wait := s.min
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, s.max)
		g, err := s.open(ctx)
		if err == nil {
			if g != nil {
				s.g.Store(g)
			}
			s.down.Store(nil) // the opener logged it: "vesta: segment mode on"
			return
		}
		if ctx.Err() != nil {
			return
		}
		s.setDown(err)
		s.log.Debug("vesta: segment store unreachable: still retrying", "err", err)
	}
}

func (s *segments) setDown(err error) {
	why := err.Error()
	s.down.Store(&why)
}

// NextIds serves the Generator, or says why there is none yet.
func (s *segments) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	if g := s.g.Load(); g != nil {
		return g.NextIds(ctx, tag, n)
	}
	return nil, s.notOpen()
}

// NextRange hands out a range of the Generator (SegmentRange), or says
// why there is none yet.
func (s *segments) NextRange(ctx context.Context, tag string, size int64) (intf.SegmentRange, error) {
	if g := s.g.Load(); g != nil {
		return g.NextRange(ctx, tag, size)
	}
	return intf.SegmentRange{}, s.notOpen()
}

// notOpen is the error of a segment call while the store is not open.
func (s *segments) notOpen() error {
	why := "not open yet"
	if p := s.down.Load(); p != nil {
		why = *p
	}
	return fmt.Errorf("segment store unreachable: %s (retrying in the background): %w", why, intf.ErrUnavailable)
}

// metrics is segment mode for the admin listener's metrics: nil while it
// is off or not open.
func (s *segments) metrics() coremetrics.Segments {
	if s == nil {
		return nil
	}
	if g := s.g.Load(); g != nil {
		return g
	}
	return nil
}

// receiverOptions are the receiver's options of cfg: the call timeout,
// and segment mode unless it is off.
func receiverOptions(cfg config.Config, s *segments) []rpcapi.ReceiverOption {
	opts := []rpcapi.ReceiverOption{rpcapi.WithCallTimeout(cfg.CallTimeout), rpcapi.WithMaxRange(cfg.SegmentMaxRange)}
	if s != nil && !s.off {
		opts = append(opts, rpcapi.WithSegments(s))
	}
	return opts
}

// close stops the retries and closes the Generator, if there is one.
func (s *segments) close() error {
	if s == nil {
		return nil
	}
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	g := s.g.Load()
	if g == nil {
		return nil
	}
	if err := g.Close(); err != nil {
		return fmt.Errorf("closing segment mode: %w", err)
	}
	return nil
}
