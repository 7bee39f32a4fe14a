package restserver

import (
	"context"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/server/callmetrics"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/ctxtime"
)

// genId serves /genid: one ID, or with ?count=N a batch of N, in the form
// ?format= names (the decimal by default).
func (s *Server) genId(c echo.Context) error {
	var (
		n    int
		form idForm
	)
	if raw := c.Request().URL.RawQuery; raw != "" { // the hot path has nothing to parse
		p, err := parseParams(raw)
		if err != nil {
			return err
		}
		if n, err = s.countOf(p); err != nil {
			return err
		}
		if _, form, err = s.requestForm(c.Request().Context(), p); err != nil {
			return err
		}
	}
	svc, err := s.service()
	if err != nil {
		return err
	}
	return serveIds(s, c, vestaIds{svc, s.metrics.issued}, n, form)
}

// batchSize reads ?count=N (1..maxBatch) of /segment/{tag}; 0 means count
// was not given: one ID.
func (s *Server) batchSize(rawQuery string) (int, error) {
	if rawQuery == "" { // the hot path: nothing to parse
		return 0, nil
	}
	p, err := parseParams(rawQuery)
	if err != nil {
		return 0, err
	}
	return s.countOf(p)
}

// countOf reads ?count=N (1..maxBatch) of p; 0 when not given.
func (s *Server) countOf(p params) (int, error) {
	if _, batch, err := p.get("count"); !batch || err != nil {
		return 0, err
	}
	n, err := p.required("count", s.countWant)
	if err != nil {
		return 0, err
	}
	if err := intf.CheckRange("count", n, 1, int64(s.maxBatch)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// idSource is where a request's IDs come from, the ID service or one
// segment tag, and where they are counted once issued. T is intf.Id for
// the ID service's and int64 for a segment's (plain counters).
type idSource[T intf.Id | int64] interface {
	one(ctx context.Context) (T, error)
	batch(ctx context.Context, n int) ([]T, error)
	issued(n int)
}

// vestaIds are the ID service's IDs.
type vestaIds struct {
	svc     Service
	counter *callmetrics.Counter
}

func (v vestaIds) one(ctx context.Context) (intf.Id, error)            { return v.svc.GenId(ctx) }
func (v vestaIds) batch(ctx context.Context, n int) ([]intf.Id, error) { return v.svc.GenIds(ctx, n) }
func (v vestaIds) issued(n int)                                        { v.counter.Add(uint64(n)) }

// serveIds answers one ID from src (n == 0) or a batch of n, its call
// bounded by the server's callTimeout, once the caller's quota allows
// them (the IDs not issued go back to it), in form (nil: decimal). It is generic rather than taking an
// interface so that src is not boxed.
func serveIds[T intf.Id | int64, S idSource[T]](s *Server, c echo.Context, src S, n int, form idForm) error {
	r := c.Request()
	ctx := r.Context()
	if s.callTimeout > 0 {
		d := ctxtime.WithTimeoutCause(ctx, s.callTimeout, errCallTimeout) // a timer only if the call waits
		defer d.Stop()
		ctx = d
	}
	grant, err := s.take(c, n)
	if err != nil {
		return err
	}
	if n == 0 {
		id, err := src.one(ctx)
		if err != nil {
			grant.Done(0)
			return s.callError(ctx, err)
		}
		grant.Done(1)
		src.issued(1)
		return writeId(c, id, wantsJSON(r), form)
	}
	ids, err := src.batch(ctx, n)
	if err != nil {
		grant.Done(0)
		return s.callError(ctx, err)
	}
	grant.Done(len(ids))
	src.issued(len(ids))
	return writeIds(c, ids, wantsJSON(r), form)
}

// callError names the callTimeout when it ended the call.
func (s *Server) callError(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) && context.Cause(ctx) == errCallTimeout {
		return s.errCallTimeout
	}
	return err
}
