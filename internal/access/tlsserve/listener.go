package tlsserve

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vesta-go/vesta/internal/lograte"
)

// Reason says why a handshake failed; Stats counts failures by it.
type Reason string

// The reasons, in the order Stats reports them.
const (
	ReasonNotTLS        Reason = "not_tls"         // plain text (HTTP, gob) sent to the TLS port
	ReasonNoClientCert  Reason = "no_client_cert"  // mutual TLS, and no certificate
	ReasonBadClientCert Reason = "bad_client_cert" // a certificate not from the client CA (or expired)
	ReasonPeerRefused   Reason = "peer_refused"    // the client sent an alert: it does not trust our certificate, say
	ReasonTimeout       Reason = "timeout"         // no complete handshake in time
	ReasonClosed        Reason = "closed"          // the client went away in the middle
	ReasonProtocol      Reason = "protocol"        // no common version or cipher suite, a malformed message
)

var reasons = [...]Reason{ReasonNotTLS, ReasonNoClientCert, ReasonBadClientCert, ReasonPeerRefused, ReasonTimeout,
	ReasonClosed, ReasonProtocol}

// Reasons lists every reason, in a fixed order.
func Reasons() []Reason { return append([]Reason(nil), reasons[:]...) }

// DefaultHandshakeTimeout bounds a handshake whatever the server's own
// read deadline.
const DefaultHandshakeTimeout = 10 * time.Second

// HTTPSOnlyReply is a PlainHTTPReply for an HTTP server's TLS port (the
// REST port, server-rpc's admin listener): a 400 whose JSON body, in the
// servers' error shape, says to use https.
var HTTPSOnlyReply = []byte("HTTP/1.0 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n" +
	"Content-Length: 46\r\n\r\n{\"error\":\"this port speaks TLS: use https://\"}")

// Options configure a Listener.
type Options struct {
	// HandshakeTimeout bounds each handshake (default
	// DefaultHandshakeTimeout).
	HandshakeTimeout time.Duration
	// PlainHTTPReply, when set, is written to a client that sent a plain
	// HTTP request to the TLS port, before the connection is closed.
	PlainHTTPReply []byte
	// Logger receives the warnings about failed handshakes, at most one
	// per LogInterval (default 10 s); nil means slog.Default().
	Logger      *slog.Logger
	LogInterval time.Duration
}

// Listener is a net.Listener whose connections speak TLS. Accept returns
// at once; each connection does its handshake on its first Read or Write.
type Listener struct {
	net.Listener
	cfg  *tls.Config
	o    Options
	rate lograte.Limiter

	ok       atomic.Uint64
	failures [len(reasons)]atomic.Uint64
}

// NewListener returns a Listener of ln with the server configuration cfg
// (Certs.ServerConfig).
func NewListener(ln net.Listener, cfg *tls.Config, o Options) *Listener {
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	l := &Listener{Listener: ln, cfg: cfg, o: o}
	l.rate.Interval = o.LogInterval
	return l
}

// Accept returns the next connection, its handshake still to come.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: tls.Server(c, l.cfg), l: l}, nil
}

// Conn is a server connection of a Listener: a *tls.Conn whose first Read
// or Write does the handshake and accounts for it.
type Conn struct {
	*tls.Conn
	l    *Listener
	once sync.Once
	err  error
}

// Handshake runs the handshake once; every later call returns its result.
func (c *Conn) Handshake() error {
	c.once.Do(func() { c.err = c.l.handshake(c.Conn) })
	return c.err
}

func (c *Conn) Read(b []byte) (int, error) {
	if err := c.Handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *Conn) Write(b []byte) (int, error) {
	if err := c.Handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// HandshakeError is why a connection's handshake failed.
type HandshakeError struct {
	Reason Reason
	Err    error
}

func (e *HandshakeError) Error() string {
	return "tls handshake failed (" + string(e.Reason) + "): " + e.Err.Error()
}

func (e *HandshakeError) Unwrap() error { return e.Err }

// handshake runs tc's handshake and accounts for a failure. The error is
// a *net.OpError of Op "read" (net/http then closes the connection
// without answering on it) wrapping a *HandshakeError.
func (l *Listener) handshake(tc *tls.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), l.o.HandshakeTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err == nil {
		l.ok.Add(1)
		return nil
	}
	reason := classify(err)
	l.failures[indexOf(reason)].Add(1)
	if ok, n := l.rate.Allow(time.Now()); ok {
		l.o.Logger.Warn("tls: handshake failed", "reason", string(reason), "remote", tc.RemoteAddr().String(),
			"err", err, "failedSinceLastWarning", n)
	}
	if reason == ReasonNotTLS {
		l.answerPlain(err)
	}
	return &net.OpError{Op: "read", Net: "tcp", Source: tc.LocalAddr(), Addr: tc.RemoteAddr(),
		Err: &HandshakeError{Reason: reason, Err: err}}
}

// answerPlain writes PlainHTTPReply to a client whose first bytes were an
// HTTP request, then half-closes and reads what it still sends (for up to
// a second), so that closing does not reset the connection before the
// client has read the answer.
func (l *Listener) answerPlain(err error) {
	var re tls.RecordHeaderError
	if l.o.PlainHTTPReply == nil || !errors.As(err, &re) || re.Conn == nil || !looksLikeHTTP(re.RecordHeader) {
		return
	}
	c := re.Conn
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write(l.o.PlainHTTPReply); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

// looksLikeHTTP says whether a record header is the start of an HTTP
// request, as net/http tells.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH", "CONNE", "TRACE":
		return true
	}
	return false
}

func classify(err error) Reason {
	var (
		re  tls.RecordHeaderError
		cce *ClientCertError
		oe  *net.OpError
		ne  net.Error
	)
	switch {
	case errors.As(err, &re):
		return ReasonNotTLS
	case errors.Is(err, ErrNoClientCert):
		return ReasonNoClientCert
	case errors.As(err, &cce):
		return ReasonBadClientCert
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ReasonTimeout
	case errors.As(err, &oe) && oe.Op == "remote error":
		return ReasonPeerRefused
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return ReasonClosed
	}
	return ReasonProtocol
}

func indexOf(r Reason) int {
	if i := slices.Index(reasons[:], r); i >= 0 {
		return i
	}
	return len(reasons) - 1 // not one of ours: counted with the last
}

// Stats are a Listener's handshake counters, totals since NewListener.
type Stats struct {
	Handshakes uint64
	// Failures counts failed handshakes by reason (every reason present).
	Failures map[Reason]uint64
}

// Stats returns the current counters.
func (l *Listener) Stats() Stats {
	st := Stats{Handshakes: l.ok.Load(), Failures: make(map[Reason]uint64, len(reasons))}
	for i, r := range reasons {
		st.Failures[r] = l.failures[i].Load()
	}
	return st
}
