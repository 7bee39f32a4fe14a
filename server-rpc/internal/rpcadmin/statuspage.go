package rpcadmin

import (
	"github.com/vesta-go/vesta/internal/buildinfo"
	"github.com/vesta-go/vesta/internal/server/statuspage"
)

// pageOptions are the status page's: the runtime's service and segment
// mode, and the IDs the RPC door issued (ops sets its readiness).
func (a *Admin) pageOptions() statuspage.Options {
	return a.opts.Runtime.Page(statuspage.Options{
		Issued: a.issued,
		Server: "rpc", Build: buildinfo.String(), Type: a.opts.Type,
		MachineProvider: a.opts.MachineProvider, MachineSource: a.opts.MachineSource,
		Logger: a.log,
	})
}

// issued reads the Vesta IDs the RPC door issued (GenId, GenIds).
func (a *Admin) issued() uint64 { return a.calls.ids.Value() }
