package rpcadmin

import (
	"encoding/json"
	"net/http"

	"github.com/vesta-go/vesta/internal/coremetrics"
)

// readiness is what /readyz and vesta_ready say: stopping once shutdown
// began, else the service's (starting, fenced, ready) as server-rest
// decides it.
func (a *Admin) readiness() coremetrics.Health {
	if a.stopping.Load() {
		return coremetrics.Health{Status: coremetrics.StatusStopping, Error: coremetrics.ReasonStopping}
	}
	return coremetrics.ServiceReadiness(a.stats)
}

// healthz says the process serves HTTP: always 200.
func (a *Admin) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, coremetrics.Health{Status: "ok"})
}

// readyz is 200 once the ID service has started and holds its machine
// id, 503 (with Retry-After) while it starts, while it is fenced and once
// shutdown begins.
func (a *Admin) readyz(w http.ResponseWriter, _ *http.Request) {
	h := a.readiness()
	if h.Status != coremetrics.StatusReady {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client went away: nothing to do
}
