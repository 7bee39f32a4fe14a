package rpcserver

import (
	"bufio"
	"encoding/gob"
	"errors"
	"net"
	"net/rpc"
	"sync"
	"time"
)

// serverCodec is net/rpc's gob server codec with the limits: reads go
// through a frameReader, and each reply must be written within
// WriteTimeout or the connection is closed.
type serverCodec struct {
	c            *conn
	r            *frameReader
	dec          *gob.Decoder
	w            *bufio.Writer
	enc          *gob.Encoder
	writeTimeout time.Duration
	ctr          *counters
	closeOnce    sync.Once
	closeErr     error
}

func newServerCodec(c *conn, r *frameReader, writeTimeout time.Duration, ctr *counters) *serverCodec {
	w := bufio.NewWriter(c.Conn)
	return &serverCodec{c: c, r: r, dec: gob.NewDecoder(r), w: w, enc: gob.NewEncoder(w),
		writeTimeout: writeTimeout, ctr: ctr}
}

func (s *serverCodec) ReadRequestHeader(req *rpc.Request) error {
	s.r.startCall()
	return s.dec.Decode(req)
}

func (s *serverCodec) ReadRequestBody(body any) error {
	return s.dec.Decode(body)
}

// WriteResponse is called by one goroutine at a time (net/rpc serializes
// replies). Any error leaves a partial message on the wire, so the
// connection is closed.
func (s *serverCodec) WriteResponse(resp *rpc.Response, body any) error {
	err := s.c.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	if err == nil {
		err = s.enc.Encode(resp)
	}
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
