package rpcapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/rpc"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

const (
	fuzzMachine  = 5
	fuzzMaxBatch = 1000
	// fuzzHang is how long a call or a connection may take before the
	// fuzz target calls it a hang.
	fuzzHang = 5 * time.Second
)

// fuzzSegments is a SegmentService with the tags "order" and "fuzz": it
// checks tags and counts as a real one does (intf.CheckTag,
// intf.ErrUnknownTag) and numbers each tag's IDs from 1.
type fuzzSegments struct {
	mu   sync.Mutex
	next map[string]int64
}

func (s *fuzzSegments) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	if err := intf.CheckTag(tag); err != nil {
		return nil, err
	}
	if err := intf.CheckRange("count", int64(n), 1, intf.MaxBatch); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	first, ok := s.next[tag]
	if !ok {
		return nil, fmt.Errorf("segment tag %q: %w: create it first", tag, intf.ErrUnknownTag)
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = first + int64(i)
	}
	s.next[tag] = first + int64(n)
	return ids, nil
}

func (s *fuzzSegments) Tags(context.Context) ([]string, error) { return []string{"fuzz", "order"}, nil }

// fuzzService is a real ID service (machine 5, no data dir).
func fuzzService(tb testing.TB) *service.Service {
	tb.Helper()
	svc, err := service.New(context.Background(), service.Settings{
		Machine: fuzzMachine, GenMethod: intf.GenMethodCentral, NoDataDir: true, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close() })
	return svc
}

// fuzzClient serves a Receiver of svc over net.Pipe with net/rpc, as the
// plugin transport does, and returns a plain net/rpc client of it: the
// arguments go through gob exactly as a foreign client's would.
func fuzzClient(tb testing.TB, svc intf.IdService) *rpc.Client {
	tb.Helper()
	srv := rpc.NewServer()
	seg := &fuzzSegments{next: map[string]int64{"order": 1, "fuzz": 1}}
	if err := srv.RegisterName(rpcapi.ServiceName, rpcapi.NewReceiver(svc, fuzzMaxBatch, rpcapi.WithSegments(seg))); err != nil {
		tb.Fatal(err)
	}
	a, b := net.Pipe()
	go srv.ServeConn(a)
	c := rpc.NewClient(b)
	tb.Cleanup(func() { c.Close() })
	return c
}

// fuzzCall makes one call and fails the test when it hangs or the
// receiver returns an error of its own (its errors belong in the reply).
func fuzzCall(t *testing.T, c *rpc.Client, method string, args, reply any) {
	t.Helper()
	call := c.Go(rpcapi.ServiceName+"."+method, args, reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		if call.Error != nil {
			t.Fatalf("%s(%+v): the call itself failed: %v", method, args, call.Error)
		}
	case <-time.After(fuzzHang):
		t.Fatalf("%s(%+v): no reply within %s", method, args, fuzzHang)
	}
}

// FuzzReceiverArgs sends any arguments, gob-encoded by net/rpc, to each
// method of a Receiver serving a real ID service, and checks:
//   - no panic and no hang; the method's own error is always nil;
//   - a reply error has a known code and a bounded message; one for a
//     count outside 1..maxBatch, an out-of-range field or unknown Set bits
//     is CodeInvalidArgument with Field naming it and its value; a
//     malformed tag is CodeInvalidArgument with Tag set; an unknown tag
//     CodeUnknownTag; a negative Timeout CodeDeadlineExceeded;
//   - a valid call round-trips: GenId/GenIds give machine-5 IDs, count of
//     them, increasing; MakeId's ID splits into the fields given; ExpId of
//     any 64 bits is intf.Decode of them; TransTime answers a UTC time;
//     SegmentNextIds gives count increasing IDs of a known tag.
func FuzzReceiverArgs(f *testing.F) {
	// Seeds: method, count, timeout, id, time, seq, machine, genMethod,
	// type, version, set, tag.
	type seed struct {
		m                                   uint8
		count                               int
		timeout, id, tm, seq, mach, gm, typ int64
		ver                                 int64
		set                                 uint8
		tag                                 string
	}
	for _, s := range []seed{
		{m: 0},
		{m: 0, timeout: -1},
		{m: 0, timeout: int64(time.Second)},
		{m: 1, count: 10},
		{m: 1, count: 0},
		{m: 1, count: -1},
		{m: 1, count: fuzzMaxBatch},
		{m: 1, count: fuzzMaxBatch + 1},
		{m: 1, count: 1 << 40},
		{m: 2, id: 2705126582500361294},
		{m: 2, id: -1},
		{m: 2, id: -6518245454354414514},
		{m: 3, tm: 371861805, seq: 498081, mach: 78, gm: 2, set: 0xf},
		{m: 3, tm: 371861805, seq: 498081, mach: 78, set: 1},
		{m: 3, tm: 371861805, seq: 1 << 20},
		{m: 3, tm: 1 << 40, seq: 1, typ: 1, set: 4},
		{m: 3, tm: 1, seq: 1, mach: 1024, set: 1},
		{m: 3, tm: 1, seq: 1, set: 0x10},
		{m: 3, tm: 1, seq: 1, ver: 2, set: 8},
		{m: 3, tm: -1, seq: -1, typ: 7, set: 4},
		{m: 4, tm: 371861805},
		{m: 4, tm: 371861805000, typ: 1},
		{m: 4, tm: -1},
		{m: 4, tm: 1, typ: 2},
		{m: 5, count: 3, tag: "order"},
		{m: 5, count: 1, tag: "coupon"},
		{m: 5, count: 1, tag: "a b"},
		{m: 5, count: 1, tag: ""},
		{m: 5, count: 1, tag: string(bytes.Repeat([]byte("é"), 100))},
		{m: 5, count: 0, tag: "order"},
	} {
		f.Add(s.m, s.count, s.timeout, s.id, s.tm, s.seq, s.mach, s.gm, s.typ, s.ver, s.set, s.tag)
	}

	svc := fuzzService(f)
	c := fuzzClient(f, svc)
	f.Fuzz(func(t *testing.T, m uint8, count int, timeout, id, tm, seq, mach, gm, typ, ver int64, set uint8, tag string) {
		to := time.Duration(timeout)
		if to > 0 && to < time.Second {
			to += time.Second // a positive timeout the call can meet
		}
		// checkErr checks a reply error: known code, bounded message,
		// the deadline code for a call sent past its deadline.
		checkErr := func(method string, e *rpcapi.Error) {
			t.Helper()
			if e == nil {
				if to < 0 {
					t.Fatalf("%s with timeout %s: no error", method, to)
				}
				return
			}
			if e.Code < rpcapi.CodeInvalidArgument || e.Code > rpcapi.CodeSegmentOff {
				t.Fatalf("%s: unknown code %d: %s", method, e.Code, e.Message)
			}
			if e.Code == rpcapi.CodeInternal {
				t.Fatalf("%s: internal error: %s", method, e.Message)
			}
			if len(e.Message) > 2048 || e.Message == "" {
				t.Fatalf("%s: message of %d bytes: %.200q", method, len(e.Message), e.Message)
			}
			// Past its deadline: refused, for that or for a bad argument
			// checked first.
			if to < 0 && e.Code != rpcapi.CodeDeadlineExceeded && e.Code != rpcapi.CodeInvalidArgument {
				t.Fatalf("%s with timeout %s: code %v, want deadline exceeded: %s", method, to, e.Code, e.Message)
			}
		}
		// fieldErr checks that e blames field with value v.
		fieldErr := func(method string, e *rpcapi.Error, field string, v int64) {
			t.Helper()
			if to < 0 && e != nil && e.Code == rpcapi.CodeDeadlineExceeded {
				return
			}
			if e == nil || e.Code != rpcapi.CodeInvalidArgument || e.Field == nil || e.Field.Field != field || e.Field.Value != v {
				t.Fatalf("%s: want invalid argument naming %s=%d, got %+v", method, field, v, e)
			}
		}
		switch m % 6 {
		case 0:
			var r rpcapi.GenIdReply
			fuzzCall(t, c, "GenId", rpcapi.GenIdArgs{Timeout: to}, &r)
			checkErr("GenId", r.Err)
			if r.Err == nil && intf.Id(r.Id).Fields().Machine != fuzzMachine {
				t.Fatalf("GenId: %d is not machine %d's", r.Id, fuzzMachine)
			}
		case 1:
			var r rpcapi.GenIdsReply
			fuzzCall(t, c, "GenIds", rpcapi.GenIdsArgs{Count: count, Timeout: to}, &r)
			checkErr("GenIds", r.Err)
			if count < 1 || count > fuzzMaxBatch {
				fieldErr("GenIds", r.Err, "count", int64(count))
				return
			}
			if r.Err == nil {
				if len(r.Ids) != count {
					t.Fatalf("GenIds(%d): %d IDs", count, len(r.Ids))
				}
				for i := 1; i < len(r.Ids); i++ {
					if r.Ids[i] <= r.Ids[i-1] {
						t.Fatalf("GenIds(%d): not increasing at %d", count, i)
					}
				}
			}
		case 2:
			var r rpcapi.ExpIdReply
			fuzzCall(t, c, "ExpId", rpcapi.ExpIdArgs{Id: intf.Id(id), Timeout: to}, &r)
			checkErr("ExpId", r.Err)
			if r.Err == nil && r.Id != intf.Id(id).Fields() {
				t.Fatalf("ExpId(%d) = %v, want %v", id, r.Id, intf.Id(id).Fields())
			}
		case 3:
			args := rpcapi.MakeIdArgs{Time: tm, Seq: seq, Machine: mach, GenMethod: gm, Type: typ, Version: ver,
				Set: rpcapi.Fields(set), Timeout: to}
			var r rpcapi.MakeIdReply
			fuzzCall(t, c, "MakeId", args, &r)
			checkErr("MakeId", r.Err)
			if args.Set&^0xf != 0 {
				fieldErr("MakeId", r.Err, "set", int64(set))
				return
			}
			checkMakeId(t, args, r)
		case 4:
			var r rpcapi.TransTimeReply
			fuzzCall(t, c, "TransTime", rpcapi.TransTimeArgs{Time: tm, Type: intf.IdType(typ), Timeout: to}, &r)
			checkErr("TransTime", r.Err)
			if r.Err != nil && r.Err.Code == rpcapi.CodeInvalidArgument &&
				(r.Err.Field == nil || (r.Err.Field.Field != "time" && r.Err.Field.Field != "type")) {
				t.Fatalf("TransTime(%d, %d): invalid argument naming no field: %+v", tm, typ, r.Err)
			}
			if r.Err == nil && r.Time.Location() != time.UTC {
				t.Fatalf("TransTime(%d, %d) = %v, not UTC", tm, typ, r.Time)
			}
		case 5:
			var r rpcapi.SegmentReply
			fuzzCall(t, c, "SegmentNextIds", rpcapi.SegmentArgs{Tag: tag, Count: count, Timeout: to}, &r)
			checkErr("SegmentNextIds", r.Err)
			switch {
			case count < 1 || count > fuzzMaxBatch:
				fieldErr("SegmentNextIds", r.Err, "count", int64(count))
			case to < 0:
			case intf.CheckTag(tag) != nil:
				if r.Err == nil || r.Err.Code != rpcapi.CodeInvalidArgument || r.Err.Tag == nil || len(r.Err.Tag.Tag) > 64+32 {
					t.Fatalf("SegmentNextIds(%.80q): want a bounded tag error, got %+v", tag, r.Err)
				}
			case tag != "order" && tag != "fuzz":
				if r.Err == nil || r.Err.Code != rpcapi.CodeUnknownTag {
					t.Fatalf("SegmentNextIds(%q): want unknown tag, got %+v", tag, r.Err)
				}
			default:
				if r.Err != nil || len(r.Ids) != count {
					t.Fatalf("SegmentNextIds(%q, %d) = %d IDs, %+v", tag, count, len(r.Ids), r.Err)
				}
			}
		}
	})
}

// checkMakeId checks a MakeId reply for args with defined Set bits: an ID
// holding exactly the fields given, or an invalid argument naming one of
// the fields given that is out of range.
func checkMakeId(t *testing.T, args rpcapi.MakeIdArgs, r rpcapi.MakeIdReply) {
	t.Helper()
	if args.Timeout < 0 {
		return
	}
	given := map[string]int64{"time": args.Time, "seq": args.Seq}
	for _, f := range []struct {
		bit  rpcapi.Fields
		name string
		v    int64
	}{{rpcapi.FieldMachine, "machine", args.Machine}, {rpcapi.FieldGenMethod, "genMethod", args.GenMethod},
		{rpcapi.FieldType, "type", args.Type}, {rpcapi.FieldVersion, "version", args.Version}} {
		if args.Set&f.bit != 0 {
			given[f.name] = f.v
		}
	}
	if r.Err != nil {
		if r.Err.Code != rpcapi.CodeInvalidArgument || r.Err.Field == nil {
			t.Fatalf("MakeId(%+v): %+v, want an invalid argument naming a field", args, r.Err)
		}
		v, ok := given[r.Err.Field.Field]
		if !ok || v != r.Err.Field.Value {
			t.Fatalf("MakeId(%+v): blames %s=%d, which was not given so", args, r.Err.Field.Field, r.Err.Field.Value)
		}
		return
	}
	x := intf.Id(r.Id).Fields()
	got := map[string]int64{"time": x.Time, "seq": x.Seq, "machine": x.Machine, "genMethod": x.GenMethod, "type": x.Type, "version": x.Version}
	for name, v := range given {
		if got[name] != v {
			t.Fatalf("MakeId(%+v) = %d: %s %d, want %d", args, r.Id, name, got[name], v)
		}
	}
	if _, ok := given["machine"]; !ok && x.Machine != fuzzMachine {
		t.Fatalf("MakeId(%+v) = %d: machine %d, want the server's %d", args, r.Id, x.Machine, fuzzMachine)
	}
}

// recordedCalls is what a net/rpc client writes for one call of each
// method: real gob streams, the fuzzer's starting points.
func recordedCalls(tb testing.TB) [][]byte {
	tb.Helper()
	calls := []struct {
		method string
		args   any
	}{
		{"GenId", rpcapi.GenIdArgs{Timeout: time.Second}},
		{"GenIds", rpcapi.GenIdsArgs{Count: 3}},
		{"ExpId", rpcapi.ExpIdArgs{Id: 2705126582500361294}},
		{"MakeId", rpcapi.NewMakeIdArgs(intf.MakeIdRequest{Time: 371861805, Seq: 498081}.WithMachine(78))},
		{"TransTime", rpcapi.TransTimeArgs{Time: 371861805}},
		{"SegmentNextIds", rpcapi.SegmentArgs{Tag: "order", Count: 2}},
		{"NoSuchMethod", rpcapi.GenIdArgs{}},
	}
	var out [][]byte
	var all bytes.Buffer
	rec := &callRecorder{}
	c := rpc.NewClient(rec)
	for _, call := range calls {
		rec.buf.Reset()
		c.Go(rpcapi.ServiceName+"."+call.method, call.args, new(struct{}), make(chan *rpc.Call, 1))
		out = append(out, bytes.Clone(rec.buf.Bytes()))
		all.Write(rec.buf.Bytes())
	}
	c.Close()
	return append(out, all.Bytes())
}

// callRecorder is a connection that keeps what is written and never answers.
type callRecorder struct {
	buf    bytes.Buffer
	closed chan struct{}
	once   sync.Once
}

func (r *callRecorder) Write(p []byte) (int, error) { return r.buf.Write(p) }
func (r *callRecorder) Read([]byte) (int, error) {
	r.once.Do(func() { r.closed = make(chan struct{}) })
	<-r.closed
	return 0, io.EOF
}
func (r *callRecorder) Close() error {
	r.once.Do(func() { r.closed = make(chan struct{}) })
	select {
	case <-r.closed:
	default:
		close(r.closed)
	}
	return nil
}

// FuzzServerBytes writes any bytes to the real RPC server (rpcserver, the
// one server-rpc runs, with its message size limit and deadlines) over
// net.Pipe, reads whatever it answers, then hangs up, and checks that the
// server neither panics nor hangs: the connection is closed and Shutdown
// returns within fuzzHang. The seeds are real call streams, cut and
// corrupted.
func FuzzServerBytes(f *testing.F) {
	calls := recordedCalls(f)
	for _, c := range calls {
		f.Add(c)
		f.Add(c[:len(c)/2])
		if len(c) > 8 {
			bad := bytes.Clone(c)
			bad[len(bad)/3] ^= 0xff
			f.Add(bad)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}) // a huge length
	f.Add(bytes.Repeat([]byte{0x80}, 64))

	svc := fuzzService(f)
	seg := &fuzzSegments{next: map[string]int64{"order": 1, "fuzz": 1}}
	recv := rpcapi.NewReceiver(svc, fuzzMaxBatch, rpcapi.WithSegments(seg))
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, err := rpcserver.New(recv, rpcserver.Options{
			MaxMessageBytes: 4 << 10, FirstByteTimeout: time.Second, IdleTimeout: time.Second,
			MessageTimeout: time.Second, WriteTimeout: time.Second, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		ln := nettest.NewPipeListener()
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		conn, err := ln.Dial()
		if err != nil {
			t.Fatal(err)
		}
		read := make(chan struct{})
		go func() { // drain the replies until the server closes
			defer close(read)
			io.Copy(io.Discard, conn)
		}()
		conn.SetWriteDeadline(time.Now().Add(fuzzHang))
		// The server may close before reading it all; it must not stop
		// reading while the connection stays open.
		_, werr := conn.Write(data)
		conn.Close()
		if errors.Is(werr, os.ErrDeadlineExceeded) {
			t.Fatalf("the server stopped reading for %s with the connection open; input %q", fuzzHang, data)
		}
		select {
		case <-read:
		case <-time.After(fuzzHang):
			t.Fatalf("the connection is still open %s after the client hung up; input %q", fuzzHang, data)
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzHang)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v (stats %+v); input %q", err, srv.Stats(), data)
		}
		select {
		case err := <-served:
			if !errors.Is(err, rpcserver.ErrServerClosed) {
				t.Fatalf("Serve: %v", err)
			}
		case <-time.After(fuzzHang):
			t.Fatalf("Serve still runs %s after Shutdown; input %q", fuzzHang, data)
		}
	})
}
