package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Keys of the servers' security (docs/security.md).
const (
	KeyTLSCert        = "tlsCert"
	KeyTLSKey         = "tlsKey"
	KeyTLSClientCA    = "tlsClientCA"
	KeyAuthFile       = "authFile"
	KeyRateLimit      = "rateLimit"
	KeyRateBurst      = "rateBurst"
	KeyReloadInterval = "reloadInterval"
)

// GroupSecurity is TLS, the auth file and the quotas of a server.
const GroupSecurity Group = "security"

// DefaultReloadInterval is how often a server looks for changed TLS and
// auth files.
const DefaultReloadInterval = time.Second

// MaxRateLimit bounds rateLimit and rateBurst (access.MaxRate).
const MaxRateLimit = 1e9

// Security is what a server needs to build its TLS and its guard; files
// are read by the program (internal/server/app), not here.
type Security struct {
	// TLSCert and TLSKey turn on TLS for the listener; TLSClientCA adds
	// mutual TLS.
	TLSCert, TLSKey, TLSClientCA string
	// AuthFile requires a token of one of its clients on every call.
	AuthFile string
	// RateLimit and RateBurst are a quota of IDs per remote address when
	// there is no auth file (0: none).
	RateLimit float64
	RateBurst int64
	// ReloadInterval is how often the files are looked at (0: only on
	// SIGHUP).
	ReloadInterval time.Duration
}

// TLS says whether TLS is on.
func (s Security) TLS() bool { return s.TLSCert != "" }

// Reloadable says whether there are files to watch.
func (s Security) Reloadable() bool { return s.TLS() || s.AuthFile != "" }

// securityKeys are the keys of GroupSecurity.
func securityKeys() []Key {
	return []Key{
		{Name: KeyTLSCert, Flag: "tls-cert", Env: "VESTA_TLS_CERT", Group: GroupSecurity,
			Usage: "PEM certificate (chain) of the listener: turns on TLS 1.2+ (with tlsKey); reloaded when the file changes"},
		{Name: KeyTLSKey, Flag: "tls-key", Env: "VESTA_TLS_KEY", Group: GroupSecurity,
			Usage: "PEM private key of tlsCert"},
		{Name: KeyTLSClientCA, Flag: "tls-client-ca", Env: "VESTA_TLS_CLIENT_CA", Group: GroupSecurity,
			Usage: "PEM CA bundle: clients must present a certificate it signed (mutual TLS; needs tlsCert)"},
		{Name: KeyAuthFile, Flag: "auth-file", Env: "VESTA_AUTH_FILE", Group: GroupSecurity,
			Usage: "YAML file of clients (token SHA-256, scopes, quotas): every call but the health checks needs a token; reloaded when it changes"},
		{Name: KeyRateLimit, Flag: "rate-limit", Env: "VESTA_RATE_LIMIT", Group: GroupSecurity, Default: num(0),
			Usage: "without authFile: IDs per second one remote address may take (0: no limit)"},
		{Name: KeyRateBurst, Flag: "rate-burst", Env: "VESTA_RATE_BURST", Group: GroupSecurity, Default: num(0),
			Usage: "IDs above rateLimit one address may take at once (0: one second's worth)"},
		{Name: KeyReloadInterval, Flag: "reload-interval", Env: "VESTA_RELOAD_INTERVAL", Group: GroupSecurity,
			Default: dur(DefaultReloadInterval),
			Usage:   "how often the TLS and auth files are checked for changes (0: only on SIGHUP)"},
	}
}

// security reads and cross-checks the security keys.
func (r *reader) security() Security {
	s := Security{
		TLSCert:     r.str(KeyTLSCert, ""),
		TLSKey:      r.str(KeyTLSKey, ""),
		TLSClientCA: r.str(KeyTLSClientCA, ""),
		AuthFile:    r.str(KeyAuthFile, ""),
		RateLimit:   r.float(KeyRateLimit, 0, MaxRateLimit),
		RateBurst:   r.int(KeyRateBurst, "", 0, 0, MaxRateLimit),
	}
	s.ReloadInterval = r.duration(KeyReloadInterval, DefaultReloadInterval, 0, time.Hour)
	switch {
	case s.TLSCert != "" && s.TLSKey == "":
		r.fail(KeyTLSKey, "", "the PEM private key of tlsCert (TLS needs both)")
	case s.TLSKey != "" && s.TLSCert == "":
		r.fail(KeyTLSCert, "", "the PEM certificate of tlsKey (TLS needs both)")
	case s.TLSClientCA != "" && s.TLSCert == "":
		r.fail(KeyTLSClientCA, s.TLSClientCA, "no client CA without TLS: set tlsCert and tlsKey too")
	case s.RateBurst != 0 && s.RateLimit == 0:
		r.fail(KeyRateBurst, s.RateBurst, "0 without rateLimit: a burst is the IDs above the rate")
	case s.RateLimit != 0 && s.AuthFile != "":
		r.fail(KeyRateLimit, r.str(KeyRateLimit, ""), "0 with an authFile: give each client its rate and burst in the auth file")
	}
	return s
}

// float reads a number min..max.
func (r *reader) float(key string, min, max float64) float64 {
	want := fmt.Sprintf("a number %g..%g", min, max)
	if r.failEmptyEnv(key, want) {
		return 0
	}
	v, name, set := r.raw(key, "")
	if !set {
		return 0
	}
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case float64:
		f = x
	default:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(fmt.Sprint(v)), 64); err != nil {
			r.fail(name, v, want)
			return 0
		}
	}
	if math.IsNaN(f) || f < min || f > max {
		r.fail(name, v, want)
		return 0
	}
	return f
}
