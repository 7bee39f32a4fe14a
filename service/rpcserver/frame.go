package rpcserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
)

// MessageTooBigError is why a connection sending a message over
// Options.MaxMessageBytes was closed.
type MessageTooBigError struct {
	Size, Max uint64
}

func (e *MessageTooBigError) Error() string {
	return fmt.Sprintf("vesta rpc: message of %d bytes over the limit of %d", e.Size, e.Max)
}

// ErrBadHeader means a message's byte count was not a gob count.
var ErrBadHeader = errors.New("vesta rpc: malformed message header")

// frameReader sits between a connection and its gob decoder. gob sends
// each message after its byte count (one byte below 128; else a byte
// holding minus the number of big-endian count bytes that follow), so
// reading the count here refuses a message over the limit before gob
// allocates for it, and tells where calls begin, which sets the deadlines:
// the first byte of a connection within FirstByteTimeout, of a later call
// within IdleTimeout, the rest of a call within MessageTimeout of its
// first byte.
//
// It implements io.ByteReader, so gob reads it as is and never reads
// ahead of the message it decodes.
type frameReader struct {
	c   *conn
	br  *bufio.Reader
	d   *deadlineReader // under br: the read deadline
	o   *Options
	ctr *counters

	hdr            [9]byte // the current message's count, handed to gob first
	hdrLen, hdrOff int
	left           uint64 // bytes of the current message gob has not read

	callNext bool  // the next message begins a call (set by startCall)
	started  bool  // a byte has arrived
	err      error // sticky: after an error the stream is lost
}

func newFrameReader(c *conn, o *Options, ctr *counters) *frameReader {
	// The first wait is armed exactly: a TLS handshake runs in it.
	d := &deadlineReader{c: c, lazyDeadline: lazyDeadline{exact: true, set: c.setReadDeadline,
		step: min(o.FirstByteTimeout, o.IdleTimeout, o.MessageTimeout)}}
	return &frameReader{c: c, br: bufio.NewReader(d), d: d, o: o, ctr: ctr}
}

// startCall says that the next message begins a call.
func (r *frameReader) startCall() { r.callNext = true }

func (r *frameReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.hdrOff == r.hdrLen && r.left == 0 {
		if err := r.readHeader(); err != nil {
			r.err = err
			return 0, err
		}
	}
	if r.hdrOff < r.hdrLen {
		n := copy(p, r.hdr[r.hdrOff:r.hdrLen])
		r.hdrOff += n
		return n, nil
	}
	if uint64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.br.Read(p)
	r.left -= uint64(n)
	if err != nil {
		r.err = r.failed(err, false)
		return n, r.err
	}
	return n, nil
}

func (r *frameReader) ReadByte() (byte, error) {
	var b [1]byte
	for {
		n, err := r.Read(b[:])
		if n == 1 {
			return b[0], nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// readHeader reads the next message's count, waiting for it as the
// deadlines say.
func (r *frameReader) readHeader() error {
	call := r.callNext
	if call {
		wait := r.o.IdleTimeout
		if !r.started {
			wait = r.o.FirstByteTimeout
		}
		if r.c.isStopping() {
			return io.EOF // stopping: no new call is read
		}
		r.d.waitFor(wait, true)
	}
	b, err := r.br.ReadByte()
	if call {
		r.d.idle = false
		r.c.idleSince.Store(0)
	}
	if err != nil {
		return r.failed(err, call)
	}
	if call {
		if !r.started {
			r.c.started.Store(true)
			r.d.exact = !r.c.lazy()
		}
		r.callNext, r.started = false, true
		r.d.waitFor(r.o.MessageTimeout, false)
	}
	r.hdr[0], r.hdrLen, r.hdrOff = b, 1, 0
	count := uint64(b)
	if b >= 0x80 {
		n := -int(int8(b))
		if n < 1 || n > 8 {
			return ErrBadHeader
		}
		count = 0
		for i := 1; i <= n; i++ {
			if r.hdr[i], err = r.br.ReadByte(); err != nil {
				return r.failed(err, false)
			}
			count = count<<8 | uint64(r.hdr[i])
		}
		r.hdrLen = 1 + n
	}
	if count > uint64(r.o.MaxMessageBytes) {
		r.ctr.tooBig.Add(1)
		return &MessageTooBigError{Size: count, Max: uint64(r.o.MaxMessageBytes)}
	}
	r.left = count
	return nil
}

// failed counts a timeout by its kind and says why reading stopped;
// waiting says the read was waiting for a call.
func (r *frameReader) failed(err error, waiting bool) error {
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || r.c.isStopping() {
		return err
	}
	switch {
	case waiting && !r.started:
		r.ctr.firstByteTimeouts.Add(1)
		return fmt.Errorf("vesta rpc: no first byte within %s: %w", r.o.FirstByteTimeout, err)
	case waiting:
		r.ctr.idleTimeouts.Add(1)
		return fmt.Errorf("vesta rpc: idle for %s: %w", r.o.IdleTimeout, err)
	default:
		r.ctr.messageTimeouts.Add(1)
		return fmt.Errorf("vesta rpc: call not read within %s: %w", r.o.MessageTimeout, err)
	}
}
