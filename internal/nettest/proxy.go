package nettest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a TCP proxy on 127.0.0.1 in front of a server (etcd,
// PostgreSQL) that a test can cut:
// Cut closes every connection and refuses new ones until Restore.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	frozen chan struct{} // non-nil while frozen: closed by Thaw
	conns  map[net.Conn]struct{}
}

// NewProxy starts a proxy to target; the test's cleanup stops it.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("nettest: %v", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
	})
	return p
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *Proxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		c.Close()
		up.Close()
		return
	}
	go func() { _, _ = io.Copy(p.gate(up), c); up.Close() }()
	_, _ = io.Copy(p.gate(c), up)
	c.Close()
}

// gate is w, whose writes wait while the proxy is frozen.
func (p *Proxy) gate(w io.Writer) io.Writer { return gated{p, w} }

type gated struct {
	p *Proxy
	w io.Writer
}

func (g gated) Write(b []byte) (int, error) {
	g.p.mu.Lock()
	f := g.p.frozen
	g.p.mu.Unlock()
	if f != nil {
		<-f
	}
	return g.w.Write(b)
}

// Freeze holds every byte in both directions, connections kept open: the
// server behind looks hung (a stopped process, a stalled VM), not gone.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen == nil {
		p.frozen = make(chan struct{})
	}
}

// Thaw lets the bytes held by Freeze through.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen != nil {
		close(p.frozen)
		p.frozen = nil
	}
}

// track registers a connection pair unless the proxy is cut.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// Cut closes every connection and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	if p.frozen != nil {
		close(p.frozen)
		p.frozen = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}
