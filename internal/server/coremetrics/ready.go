package coremetrics

import "github.com/vesta-go/vesta/service"

// The states of /readyz, its JSON body's status.
const (
	StatusReady    = "ready"
	StatusStarting = "starting"
	StatusFenced   = "fenced"
	StatusStopping = "stopping"
)

// Why /readyz is not ready, in its JSON body's error.
const (
	ReasonStarting = "id service is starting (claiming its machine id, or waiting for the clock to pass the time high-water mark): retry shortly"
	ReasonFenced   = "machine id lease not held (fenced): no IDs until it is held again, which happens by itself"
	ReasonStopping = "server is shutting down"
)

// Health is the JSON body of /healthz and /readyz.
type Health struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// StatsFunc reads the ID service's figures; ok is false while it has not
// started (or has no service yet).
type StatsFunc func() (st service.Stats, ok bool)

// ServiceReadiness is the part of readiness the ID service decides, after
// the server's own (stopping, segment mode opening): starting until it
// is there, fenced while its machine id lease is not held, else ready.
func ServiceReadiness(stats StatsFunc) Health {
	st, ok := stats()
	switch {
	case !ok:
		return Health{Status: StatusStarting, Error: ReasonStarting}
	case !st.LeaseHeld:
		return Health{Status: StatusFenced, Error: ReasonFenced}
	}
	return Health{Status: StatusReady}
}
