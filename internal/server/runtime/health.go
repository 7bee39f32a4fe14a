package runtime

import (
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/statuspage"
	"github.com/vesta-go/vesta/service"
)

// Health is the readiness, as /readyz, vesta_ready and the status page
// say it: stopping once the drain began; starting while segment mode's
// first opening has not ended (it opens before the ID service) or the ID
// service is not constructed; fenced while its machine id lease is not
// held; else ready. A segment store being retried does not make the
// server unready: readiness is about the Vesta IDs, and the segment
// calls say unavailable.
func (r *Runtime) Health() coremetrics.Health {
	if r.draining.Load() {
		return coremetrics.Health{Status: coremetrics.StatusStopping, Error: coremetrics.ReasonStopping}
	}
	if _, open := r.segs.Open(); !open && !r.segs.Off() && r.segs.Down() == nil {
		return coremetrics.Health{Status: coremetrics.StatusStarting, Error: ErrSegmentsStarting.Error()}
	}
	return coremetrics.ServiceReadiness(r.Stats)
}

// Stats reads the ID service's figures; ok is false until it is
// constructed.
func (r *Runtime) Stats() (st service.Stats, ok bool) {
	if ref := r.svc.Load(); ref != nil {
		return ref.Stats(), true
	}
	return service.Stats{}, false
}

// Metrics is src with what the runtime reports filled in: the ID
// service's figures, the readiness and the open segment mode. The door
// sets the rest (the type, TLS, the guard).
func (r *Runtime) Metrics(src coremetrics.Source) coremetrics.Source {
	src.Stats = r.Stats
	src.Ready = func() bool { return r.Health().Status == coremetrics.StatusReady }
	src.Segments = func() coremetrics.Segments {
		if seg, ok := r.segs.Open(); ok {
			return seg
		}
		return nil
	}
	return src
}

// Page is o with what the runtime reports filled in: the ID service once
// constructed, and segment mode with its state (open, off, opening). The
// door sets the rest (its name, the IDs it issued); internal/server/ops
// sets the readiness, from Health.
func (r *Runtime) Page(o statuspage.Options) statuspage.Options {
	o.Service = func() statuspage.Service {
		if ref := r.svc.Load(); ref != nil {
			return ref.Service
		}
		return nil
	}
	o.Segments = func() (statuspage.Segments, string) {
		if seg, ok := r.segs.Open(); ok {
			return seg, statuspage.SegmentsOpen
		}
		if r.segs.Off() {
			return nil, statuspage.SegmentsOff
		}
		return nil, statuspage.SegmentsOpening
	}
	return o
}
