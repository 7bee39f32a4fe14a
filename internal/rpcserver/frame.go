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

// ErrBadHeader means a message's byte count or type id was not gob's.
var ErrBadHeader = errors.New("vesta rpc: malformed message header")

// TypeDefsError is why a connection whose gob type definitions went over
// Options.MaxTypeDefs or Options.MaxTypeDefBytes was closed: Defs and
// Bytes count the refused definition.
type TypeDefsError struct {
	Defs, Bytes, MaxDefs, MaxBytes uint64
}

func (e *TypeDefsError) Error() string {
	return fmt.Sprintf("vesta rpc: %d type definitions of %d bytes over the limit of %d definitions or %d bytes",
		e.Defs, e.Bytes, e.MaxDefs, e.MaxBytes)
}

// frameReader sits between a connection and its gob decoder. gob sends
// each message after its byte count (one byte below 128; else a byte
// holding minus the number of big-endian count bytes that follow), so
// reading the count here refuses a message over the limit before gob
// allocates for it, and tells where calls begin, which sets the deadlines:
// the first byte of a connection within FirstByteTimeout, of a later call
// within IdleTimeout, the rest of a call within MessageTimeout of its
// first byte.
//
// It also reads each message's type id, which gob reads next: a
// connection's gob decoder keeps every type defined on it for the
// connection's life, so the definitions (negative ids) are counted and
// bounded by MaxTypeDefs and MaxTypeDefBytes, before the caller is known.
// A definition is read whole and checked before gob reads it: one using
// the interface type is refused, for an interface value may carry
// definitions inside a value message, where they would not be counted.
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
	def            []byte // the rest of a type definition read whole (left bytes)

	typeDefs, typeDefBytes uint64 // the type definitions read so far

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
	if len(r.def) > 0 {
		n := copy(p, r.def)
		if r.def = r.def[n:]; len(r.def) == 0 {
			r.def = nil // read: the connection keeps no buffer of it
		}
		r.left -= uint64(n)
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
	return r.readTypeID()
}

// readTypeID reads the current message's type id without consuming it
// and, for a type definition, counts it and reads it whole into def.
func (r *frameReader) readTypeID() error {
	peek, err := r.br.Peek(int(min(r.left, 9))) // 9: the longest gob int
	if err != nil {
		return r.failed(err, false)
	}
	id, n := gobInt(peek)
	switch {
	case n == 0:
		return ErrBadHeader
	case id == gobInterface:
		r.ctr.badTypes.Add(1)
		return ErrInterfaceType
	case id >= 0:
		return nil
	}
	r.typeDefs++
	r.typeDefBytes += r.left
	if r.typeDefs > uint64(r.o.MaxTypeDefs) || r.typeDefBytes > uint64(r.o.MaxTypeDefBytes) {
		r.ctr.badTypes.Add(1)
		return &TypeDefsError{Defs: r.typeDefs, Bytes: r.typeDefBytes,
			MaxDefs: uint64(r.o.MaxTypeDefs), MaxBytes: uint64(r.o.MaxTypeDefBytes)}
	}
	def := make([]byte, r.left)
	if _, err := io.ReadFull(r.br, def); err != nil {
		return r.failed(err, false)
	}
	if err := checkTypeDef(def[n:]); err != nil {
		r.ctr.badTypes.Add(1)
		return err
	}
	r.def = def
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
