package restserver

import (
	"net"

	"github.com/vesta-go/vesta/internal/access/tlsserve"
)

// WithTLS serves HTTPS with certs (TLS 1.2+; mutual TLS with a client
// CA), whose files are reloaded without a restart by whoever calls
// certs.Reload. A plain HTTP request to the port gets a 400 saying to use
// https, and every failed handshake is counted in /metrics by reason.
func WithTLS(certs *tlsserve.Certs) Option { return func(s *Server) { s.certs = certs } }

// tlsListener puts TLS on ln when the server has certificates; the
// connections are admitted (maxConnsPerIP) before their handshake, which
// their first read does within the server's read deadline.
func (s *Server) tlsListener(ln net.Listener) net.Listener {
	if s.certs == nil {
		return ln
	}
	tl := tlsserve.NewListener(ln, s.certs.ServerConfig(), tlsserve.Options{PlainHTTPReply: tlsserve.HTTPSOnlyReply, Logger: s.log})
	s.tlsLn.Store(tl)
	return tl
}
