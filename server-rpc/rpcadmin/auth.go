package rpcadmin

import (
	"errors"
	"net/http"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
)

// errorBody is the JSON of a refusal, as server-rest writes it.
type errorBody struct {
	Error  string `json:"error"`
	Header string `json:"header,omitempty"`
	Scope  string `json:"scope,omitempty"`
}

// guarded wraps h in the metrics scope when the guard requires tokens; a
// guard with only a quota per address (rateLimit) does not close the
// metrics, as on server-rest.
func (a *Admin) guarded(h http.Handler) http.Handler {
	g := a.opts.Guard
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

// refuse answers a refusal of the guard: 401 (400 for a malformed
// header) or 403, with the challenge of RFC 6750. Its message never
// quotes a token.
func refuse(w http.ResponseWriter, err error) {
	var te *access.TokenError
	var se *intf.ScopeError
	code, body, challenge := http.StatusUnauthorized, errorBody{Error: err.Error(), Header: "Authorization"}, `Bearer realm="vesta"`
	switch {
	case errors.As(err, &te) && te.Malformed():
		code, challenge = http.StatusBadRequest, challenge+`, error="invalid_request"`
	case errors.As(err, &te) && te.Reason == access.ReasonUnknownToken:
		challenge += `, error="invalid_token"`
	case errors.As(err, &se):
		code, body = http.StatusForbidden, errorBody{Error: err.Error(), Scope: se.Scope}
		challenge += `, error="insufficient_scope", scope="` + se.Scope + `"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeJSON(w, code, body)
}
