package restserver

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// openSegments makes the first attempt at opening segment mode. A store
// that cannot be reached (intf.ErrUnavailable) is not an error: the
// attempts go on in the background (retrySegments) and /segment answers
// 503 meanwhile, so that a database outage at start costs segment IDs,
// not the Vesta IDs too. Any other error is returned: a configuration the
// operator must fix. Off is not an error.
func (s *Server) openSegments(ctx context.Context) error {
	if s.openSegmentsFn == nil {
		return s.publishSegments(nil)
	}
	seg, err := s.openSegmentsFn(ctx)
	if err == nil {
		return s.publishSegments(seg)
	}
	if !errors.Is(err, intf.ErrUnavailable) || ctx.Err() != nil {
		return err // the opener names segment mode (internal/app does)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return intf.ErrClosed
	}
	s.segmentsDown(err, true)
	s.retry.Add(1) // under mu, before Close can Wait
	go s.retrySegments()
	return nil
}

// retrySegments opens segment mode until it opens or Close, waiting
// retryMin after the first failure and twice as long after each next one,
// up to retryMax.
func (s *Server) retrySegments() {
	defer s.retry.Done()
	wait := s.retryMin
	for {
		t := time.NewTimer(wait)
		select {
		case <-s.bg.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, s.retryMax)
		seg, err := s.openSegmentsFn(s.bg)
		if s.bg.Err() != nil {
			if err == nil && seg != nil {
				_ = seg.Close() // opened as Close began: nothing may use it
			}
			return
		}
		if err == nil {
			if s.publishSegments(seg) == nil {
				s.segDown.Store(nil)
			}
			return
		}
		s.segmentsDown(err, false)
	}
}

// segmentsDown records why segment mode is not open, for /segment's 503,
// and logs it when the kind of failure changes (unreachable, or failing
// otherwise, e.g. a password refused once the database answers): once per
// state, not once per attempt.
func (s *Server) segmentsDown(err error, first bool) {
	unreachable := errors.Is(err, intf.ErrUnavailable)
	what := "segment store unreachable"
	if !unreachable {
		what = "segment store failing to open"
	}
	ae := &apiError{Status: http.StatusServiceUnavailable, Err: errors.Join(err, intf.ErrUnavailable),
		Msg: what + ": " + err.Error() + " (retrying in the background)"}
	prev := s.segDown.Swap(ae)
	switch {
	case first:
		s.log.Warn("vesta: segment store unreachable at start: serving IDs; segment calls answer unavailable (/segment: 503) and the store is retried in the background",
			"err", err, "firstRetry", s.retryMin, "maxWait", s.retryMax)
	case prev == nil || errors.Is(prev.Err, intf.ErrUnavailable) != unreachable:
		s.log.Warn("vesta: "+what+": still retrying", "err", err)
	default:
		s.log.Debug("vesta: "+what+": still retrying", "err", err)
	}
}

// publishSegments makes segment mode (nil: off) available to the
// handlers, unless Close came first, which then closes it. The opener
// logs what it opened (app.OpenSegments: "vesta: segment mode on").
func (s *Server) publishSegments(seg Segments) error {
	if seg == nil {
		s.segmentsOff.Store(true)
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.Join(intf.ErrClosed, seg.Close())
	}
	s.seg.Store(&segmentsRef{seg})
	return nil
}
