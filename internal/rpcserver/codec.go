package rpcserver

import (
	"bufio"
	"encoding/gob"
	"errors"
	"net"
	"net/rpc"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/service/ctxtime"
)

// serverCodec is net/rpc's gob server codec with the limits: reads go
// through a frameReader, each reply must be written within WriteTimeout
// or the connection is closed, and the calls in flight are bounded.
//
// Calls run each on a worker of their own (workers) and every reply
// queues behind a slow reader, so the codec does not read the next call
// while the connection has MaxCallsPerConn calls unanswered — nor, until
// a call of it presented a valid token (authed), while it has one: a
// stranger gets one call's worth of work, whatever it pipelines.
//
// It is served by serveCalls only: its reads hand the read turn between
// the workers.
type serverCodec struct {
	c            *conn
	r            *frameReader
	dec          *gob.Decoder
	w            *bufio.Writer
	wd           *deadlineWriter // under w: the write deadline
	enc          *gob.Encoder
	writeTimeout time.Duration
	ctr          *counters
	closeOnce    sync.Once
	closeErr     error

	slots  chan struct{} // a token per call in flight
	authed func() bool
	// whole: the call in flight took every slot (read before authed);
	// wholeSeq is its sequence number. Read by the reading goroutine and
	// by the writing one after the call was read.
	whole    atomic.Bool
	wholeSeq atomic.Uint64

	workers workers
	writeMu sync.Mutex // replies come from several workers
}

func newServerCodec(c *conn, r *frameReader, o *Options, authed func() bool, ctr *counters) *serverCodec {
	wd := &deadlineWriter{c: c, lazyDeadline: lazyDeadline{step: o.WriteTimeout, exact: !c.lazy(), set: c.Conn.SetWriteDeadline}}
	w := bufio.NewWriter(wd)
	return &serverCodec{c: c, r: r, dec: gob.NewDecoder(r), w: w, wd: wd, enc: gob.NewEncoder(w),
		writeTimeout: o.WriteTimeout, ctr: ctr, slots: make(chan struct{}, o.MaxCallsPerConn), authed: authed}
}

func (s *serverCodec) ReadRequestHeader(req *rpc.Request) error {
	n := 1
	if !s.authed() {
		n = cap(s.slots) // one call at a time
	}
	for range n {
		s.slots <- struct{}{} // waits for replies when full
	}
	s.r.startCall()
	err := s.dec.Decode(req)
	if err != nil {
		s.release(n)
		s.workers.stop()
		return err
	}
	if n > 1 {
		s.wholeSeq.Store(req.Seq)
		s.whole.Store(true)
	}
	return nil
}

// release frees n slots.
func (s *serverCodec) release(n int) {
	for range n {
		<-s.slots
	}
}

// ReadRequestBody reads the body of the call whose header was just read,
// then hands the read turn on: the call is read.
func (s *serverCodec) ReadRequestBody(body any) error {
	err := s.dec.Decode(body)
	s.workers.passTurn()
	return err
}

// WriteResponse writes one reply at a time. Any error leaves a partial
// message on the wire, so the connection is closed.
func (s *serverCodec) WriteResponse(resp *rpc.Response, body any) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n := 1
	if s.whole.Load() && s.wholeSeq.Load() == resp.Seq {
		s.whole.Store(false)
		n = cap(s.slots)
	}
	defer s.release(n)
	s.wd.want = ctxtime.Monotonic() + s.writeTimeout
	err := s.enc.Encode(resp)
	if err == nil {
		err = s.enc.Encode(body)
	}
	if err == nil {
		err = s.w.Flush()
	}
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			s.ctr.writeTimeouts.Add(1)
		}
		s.Close()
	}
	return err
}

func (s *serverCodec) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.c.Close() })
	return s.closeErr
}
