// Package ops is the one operations surface of both servers: /healthz,
// /readyz, /metrics, the status page (/status, /ui) and their auth, as one
// http.Handler. server-rest mounts it on its port, server-rpc serves it on
// its admin listener, so a probe, a scraper and an operator meet the same
// answers on either.
package ops

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/server/coremetrics"
	"github.com/vesta-go/vesta/internal/server/statuspage"
	"github.com/vesta-go/vesta/intf"
)

// The endpoints' paths; the status page's are statuspage.PathStatus and
// statuspage.PathUI.
const (
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
	PathMetrics = "/metrics"
)

// Paths are every endpoint a Handler serves, all GET.
var Paths = []string{PathHealthz, PathReadyz, PathMetrics, statuspage.PathStatus, statuspage.PathUI}

// Options are what the surface reports.
type Options struct {
	// Readiness is what /readyz and the status page say: ready (200) or
	// why not (503 with Retry-After).
	Readiness func() coremetrics.Health
	// Metrics serves the server's registry in the Prometheus formats.
	Metrics http.Handler
	// Page configures the status page; its State is Readiness's.
	Page statuspage.Options
	// Guard, when it requires tokens, puts /metrics and /status behind
	// the metrics scope; /healthz, /readyz and /ui (a page with no data)
	// stay open. nil: all open.
	Guard *access.Guard
}

// New returns the surface of o; it does no I/O.
func New(o Options) (http.Handler, error) {
	if o.Readiness == nil || o.Metrics == nil {
		return nil, errors.New("ops: Options.Readiness and Options.Metrics are required")
	}
	o.Page.State = func() (string, string) {
		h := o.Readiness()
		return h.Status, h.Error
	}
	page, err := statuspage.New(o.Page)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathHealthz, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, coremetrics.Health{Status: "ok"}) // the process serves HTTP
	})
	mux.HandleFunc("GET "+PathReadyz, func(w http.ResponseWriter, _ *http.Request) {
		h := o.Readiness()
		if h.Status != coremetrics.StatusReady {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusServiceUnavailable, h)
			return
		}
		writeJSON(w, http.StatusOK, h)
	})
	mux.Handle("GET "+PathMetrics, guarded(o.Guard, o.Metrics))
	mux.Handle("GET "+statuspage.PathStatus, guarded(o.Guard, page.StatusHandler()))
	mux.Handle("GET "+statuspage.PathUI, page.UIHandler())
	return jsonMisses(mux), nil
}

// jsonMisses answers what mux has no endpoint for as every error of the
// product is answered, in JSON with "error": a path it does not serve
// 404, another method than GET (or HEAD) on one of its paths 405. The
// mux's own answers to those are plain text.
func jsonMisses(mux *http.ServeMux) http.Handler {
	want := strings.Join(Paths, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" { // "": no pattern takes r
			mux.ServeHTTP(w, r)
			return
		}
		if slices.Contains(Paths, r.URL.Path) {
			w.Header().Set("Allow", "GET, HEAD")
			writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "method not allowed: every endpoint takes GET"})
			return
		}
		writeJSON(w, http.StatusNotFound, errorBody{Error: "no such endpoint: use " + want})
	})
}

// guarded puts h behind the metrics scope when g requires tokens; a guard
// with only a quota per address (rateLimit) does not close it.
func guarded(g *access.Guard, h http.Handler) http.Handler {
	if g == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.RequiresToken() {
			h.ServeHTTP(w, r)
			return
		}
		c, err := g.AuthenticateHeader(r.Header.Values("Authorization"), r.RemoteAddr)
		if err == nil {
			err = g.Authorize(c, access.ScopeMetrics, r.RemoteAddr)
		}
		if err != nil {
			refuse(w, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Refusal is how an HTTP door answers a refusal of the guard (RFC 6750):
// server-rest's endpoints and this surface alike.
type Refusal struct {
	Status    int    // 401, 400 for a malformed header, 403 for a missing scope
	Challenge string // the WWW-Authenticate header
	Msg       string // the refusal's message; it never quotes a token
	Header    string // "Authorization" when the header is at fault
	Scope     string // the scope missing
}

// RefusalOf is the answer to err, a refusal of access.Guard's
// Authenticate or Authorize; false for any other error.
func RefusalOf(err error) (Refusal, bool) {
	var te *access.TokenError
	var se *intf.ScopeError
	switch {
	case errors.As(err, &te):
		r := Refusal{Status: http.StatusUnauthorized, Msg: te.Error(), Header: "Authorization"}
		switch {
		case te.Malformed():
			r.Status, r.Challenge = http.StatusBadRequest, challenge("invalid_request", "")
		case te.Reason == access.ReasonUnknownToken:
			r.Challenge = challenge("invalid_token", "")
		default: // no credentials at all: no error code (RFC 6750 3.1)
			r.Challenge = challenge("", "")
		}
		return r, true
	case errors.As(err, &se):
		return Refusal{Status: http.StatusForbidden, Challenge: challenge("insufficient_scope", se.Scope), Msg: se.Error(), Scope: se.Scope}, true
	}
	return Refusal{}, false
}

func challenge(code, scope string) string {
	v := `Bearer realm="vesta"`
	if code != "" {
		v += `, error="` + code + `"`
	}
	if scope != "" {
		v += `, scope="` + scope + `"`
	}
	return v
}

// errorBody is the JSON of an error (a refusal, a path or method not
// served), as every endpoint of server-rest writes one.
type errorBody struct {
	Error  string `json:"error"`
	Header string `json:"header,omitempty"`
	Scope  string `json:"scope,omitempty"`
}

// refuse answers a refusal of the guard (RefusalOf).
func refuse(w http.ResponseWriter, err error) {
	r, ok := RefusalOf(err)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "internal error"})
		return
	}
	w.Header().Set("WWW-Authenticate", r.Challenge)
	writeJSON(w, r.Status, errorBody{Error: r.Msg, Header: r.Header, Scope: r.Scope})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client went away: nothing to do
}
