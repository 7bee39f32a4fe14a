package nettest

import (
	"net"
	"sync"
)

// PipeListener is a net.Listener whose connections are net.Pipe pairs:
// in memory, and with deadlines on the clock of a testing/synctest
// bubble, where loopback sockets' are not. Dial hands the server end to
// Accept and returns the client end.
type PipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewPipeListener makes a PipeListener.
func NewPipeListener() *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for a Dial, or returns net.ErrClosed after Close.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close makes Accept and Dial return net.ErrClosed.
func (l *PipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

// Addr is "pipe".
func (l *PipeListener) Addr() net.Addr { return pipeAddr{} }

// Dial returns the client end of a new connection, once Accept has taken
// the server end, or net.ErrClosed after Close.
func (l *PipeListener) Dial() (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
