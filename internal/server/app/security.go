package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/authfile"
	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/reload"
	"github.com/vesta-go/vesta/internal/server/config"
)

// Security is what a server runs with from the security keys: its TLS
// certificates, its guard (tokens, scopes, quotas), and the files to
// reload while it runs.
type Security struct {
	// Certs is nil without TLS.
	Certs *tlsserve.Certs
	// Guard is nil when nothing is checked (no auth file, no rateLimit).
	Guard *access.Guard

	cfg       config.Security
	log       *slog.Logger
	reloaders []reload.Reloader
}

// certExpiryWarning is how close to its end a certificate is warned about
// at start.
const certExpiryWarning = 14 * 24 * time.Hour

// OpenSecurity reads the TLS files and the auth file of cfg. An error
// names the config key of the file at fault (and the line of the auth
// file); it never quotes a key or a token.
func OpenSecurity(cfg config.Config) (*Security, error) {
	sc := cfg.Security
	s := &Security{cfg: sc, log: cfg.Service.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	if sc.TLS() {
		certs, err := tlsserve.Load(tlsserve.Files{Cert: sc.TLSCert, Key: sc.TLSKey, ClientCA: sc.TLSClientCA})
		if err != nil {
			return nil, fmt.Errorf("config key %s: %w", tlsKeyOf(err), err)
		}
		s.Certs = certs
		s.reloaders = append(s.reloaders, certs)
		st := certs.Stats()
		s.log.Info("vesta: TLS on", "cert", sc.TLSCert, "subject", st.Subject, "notAfter", st.NotAfter.UTC(),
			"mutualTLS", certs.MutualTLS(), "clientCA", sc.TLSClientCA)
		if left := time.Until(st.NotAfter); left < certExpiryWarning {
			s.log.Warn("vesta: the TLS certificate expires soon: renew it (the new files are picked up without a restart)",
				"notAfter", st.NotAfter.UTC(), "left", left.Round(time.Minute))
		}
		if fi, err := os.Stat(sc.TLSKey); err == nil && fi.Mode().Perm()&0o077 != 0 {
			s.log.Warn("vesta: the TLS private key file can be read by others than its owner: chmod 600 it",
				"file", sc.TLSKey, "mode", fi.Mode().Perm().String())
		}
	}
	if sc.AuthFile != "" || sc.RateLimit > 0 {
		g, err := access.NewGuard(access.Options{AddrRate: sc.RateLimit, AddrBurst: sc.RateBurst, Logger: s.log})
		if err != nil {
			return nil, fmt.Errorf("config key %s: %w", config.KeyRateLimit, err)
		}
		s.Guard = g
	}
	if sc.AuthFile != "" {
		w, err := authfile.NewWatcher(sc.AuthFile, s.Guard)
		if err != nil {
			return nil, fmt.Errorf("config key %s: %w", config.KeyAuthFile, err)
		}
		s.reloaders = append(s.reloaders, w)
		var names []string
		for _, c := range s.Guard.Stats().Clients {
			names = append(names, c.Name)
		}
		s.log.Info("vesta: auth file loaded: every call but /healthz and /readyz needs a token",
			"file", sc.AuthFile, "clients", strings.Join(names, ","))
	} else if sc.RateLimit > 0 {
		s.log.Info("vesta: quota per remote address", "rateLimit", sc.RateLimit, "rateBurst", sc.RateBurst)
	}
	return s, nil
}

// tlsKeyOf is the config key of the file a tlsserve error is about.
func tlsKeyOf(err error) string {
	var fe *tlsserve.FileError
	if errors.As(err, &fe) {
		switch fe.Role {
		case tlsserve.RoleKey:
			return config.KeyTLSKey
		case tlsserve.RoleClientCA:
			return config.KeyTLSClientCA
		}
	}
	return config.KeyTLSCert
}

// Watch reloads the TLS and auth files when their content changes
// (every reloadInterval) and on SIGHUP, until ctx ends. Without such
// files it does nothing (and SIGHUP keeps its default action).
func (s *Security) Watch(ctx context.Context) {
	if len(s.reloaders) == 0 {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		reload.Watch(ctx, s.cfg.ReloadInterval, hup, s.log, s.reloaders...)
	}()
}

// WarnIfExposed warns, once, when addr (a listener's) is reachable from
// other hosts and traffic is in clear text or anyone may take IDs.
func (s *Security) WarnIfExposed(addr net.Addr) {
	if loopback(addr) {
		return
	}
	var missing []string
	if s.Certs == nil {
		missing = append(missing, "no TLS: IDs and tokens cross the network in clear text (tlsCert, tlsKey)")
	}
	if s.Guard == nil || !s.Guard.RequiresToken() {
		missing = append(missing, "no auth file: anyone who reaches the port may take IDs without limit (authFile)")
	}
	if len(missing) > 0 {
		s.log.Warn("vesta: listening on an address other hosts can reach with "+strings.Join(missing, "; and ")+
			"; see docs/security.md", "addr", addr.String())
	}
}

// loopback says whether only this host can reach addr.
func loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return false
	}
	return tcp.IP.IsLoopback()
}

// WarnAdminExposed warns, once, when the admin listener can be reached
// from other hosts and its metrics travel in clear text or can be read by
// anyone.
func (s *Security) WarnAdminExposed(addr net.Addr) {
	if loopback(addr) {
		return
	}
	var missing []string
	if s.Certs == nil {
		missing = append(missing, "no TLS (tlsCert, tlsKey)")
	}
	if s.Guard == nil || !s.Guard.RequiresToken() {
		missing = append(missing, "no auth file: anyone who reaches it may read /metrics (authFile)")
	}
	if len(missing) > 0 {
		s.log.Warn("vesta: the admin listener can be reached from other hosts with "+strings.Join(missing, "; and ")+
			"; see docs/security.md", "addr", addr.String())
	}
}

// Logger is the logger the security keys' messages go to.
func (s *Security) Logger() *slog.Logger { return s.log }
