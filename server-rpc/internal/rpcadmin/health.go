package rpcadmin

import "github.com/vesta-go/vesta/internal/server/coremetrics"

// readiness is what /readyz and vesta_ready say: stopping once shutdown
// began, else the service's (starting, fenced, ready) as server-rest
// decides it.
func (a *Admin) readiness() coremetrics.Health {
	if a.stopping.Load() {
		return coremetrics.Health{Status: coremetrics.StatusStopping, Error: coremetrics.ReasonStopping}
	}
	return coremetrics.ServiceReadiness(a.stats)
}
