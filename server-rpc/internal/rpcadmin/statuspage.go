package rpcadmin

import (
	"github.com/vesta-go/vesta/internal/buildinfo"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/statuspage"
)

// pageOptions are the status page's: the service, segment mode and the
// IDs the RPC door issued (ops sets its readiness).
func (a *Admin) pageOptions() statuspage.Options {
	return statuspage.Options{
		Service:  a.pageService,
		Segments: a.pageSegments,
		Issued:   a.issued,
		Server:   "rpc", Build: buildinfo.String(), Type: a.opts.Type,
		MachineProvider: a.opts.MachineProvider, MachineSource: a.opts.MachineSource,
		Logger: a.log,
	}
}

// pageService is the ID service once started (nil before), when it tells
// its settings too (*service.Service does).
func (a *Admin) pageService() statuspage.Service {
	if r := a.svc.Load(); r != nil {
		if s, ok := r.StatsReader.(statuspage.Service); ok {
			return s
		}
	}
	return nil
}

// pageSegments is segment mode and its state for the page.
func (a *Admin) pageSegments() (statuspage.Segments, string) {
	if a.opts.Segments != nil {
		if s := a.opts.Segments(); s != nil {
			return s, statuspage.SegmentsOpen
		}
	}
	if a.opts.SegmentsOff == nil || a.opts.SegmentsOff() {
		return nil, statuspage.SegmentsOff
	}
	return nil, statuspage.SegmentsOpening
}

// issued reads the Vesta IDs the RPC door issued (GenId, GenIds).
func (a *Admin) issued() uint64 { return coremetrics.CounterValue(a.calls.ids) }
