package grayfail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/rpc"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/rpcapi"
)

// Env is where scenarios build their servers: the binary and a directory
// for data dirs. Scenarios of one Env may run at the same time.
type Env struct {
	Bin, Dir string
	n        atomic.Int64
}

func (e *Env) start(addr string, machine int) (*Proc, error) {
	return Start(e.Bin, filepath.Join(e.Dir, fmt.Sprintf("data-%d", e.n.Add(1))), addr, machine)
}

var quiet = slog.New(slog.DiscardHandler)

func genId(c *client.Client) func(ctx context.Context, _ int) ([]int64, error) {
	return func(ctx context.Context, _ int) ([]int64, error) {
		id, err := c.GenId(ctx)
		if err != nil {
			return nil, err
		}
		return []int64{int64(id)}, nil
	}
}

// Stopped: one server stopped with SIGSTOP; callers call GenId with a
// 1 ms deadline (every 8th call sends a 64 KB segment tag, so that the
// socket buffers fill and sends get stuck).
type Stopped struct {
	Calls        int
	Slowest      time.Duration // the slowest call
	OverDeadline time.Duration // the slowest call minus its deadline
	SlowestErr   string        // the slowest call's error
	Close        time.Duration
	Goroutines   int // left after Close, above those before New
}

func (e *Env) Stopped(callers int, d time.Duration) (Stopped, error) {
	var r Stopped
	p, err := e.start("", 1)
	if err != nil {
		return r, err
	}
	defer p.Stop()
	before := runtime.NumGoroutine()
	c, err := client.New([]string{p.Addr}, client.WithLogger(quiet))
	if err != nil {
		return r, err
	}
	if _, err := c.GenId(context.Background()); err != nil {
		return r, err
	}
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return r, err
	}
	defer p.Signal(syscall.SIGCONT)
	big := strings.Repeat("x", 64<<10)
	recs, _ := Load(stopAfter(d), callers, time.Millisecond, func(ctx context.Context, i int) ([]int64, error) {
		if i%8 == 7 {
			return c.NextIds(ctx, big, 1)
		}
		return genId(c)(ctx, i)
	})
	for _, rec := range recs {
		if rec.End.Sub(rec.Start) > r.Slowest && rec.Err != nil {
			r.SlowestErr = rec.Err.Error()
		}
		r.Slowest = max(r.Slowest, rec.End.Sub(rec.Start))
		r.OverDeadline = max(r.OverDeadline, rec.End.Sub(rec.Start)-rec.Deadline)
	}
	r.Calls = len(recs)
	start := time.Now()
	c.Close()
	r.Close = time.Since(start)
	// The client's goroutines end after Close, however slow the machine:
	// the guard only bounds the wait for a leak.
	for end := time.Now().Add(30 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	r.Goroutines = runtime.NumGoroutine() - before
	return r, nil
}

// BufferedClose: a buffered client (pool 1, buffer 2000/1000) whose only
// server is stopped while the refill is due; how long Close takes.
func (e *Env) BufferedClose() (time.Duration, error) {
	p, err := e.start("", 2)
	if err != nil {
		return 0, err
	}
	defer p.Stop()
	c, err := client.New([]string{p.Addr}, client.WithLogger(quiet), client.WithPoolSize(1), client.WithBuffer(2000, 1000))
	if err != nil {
		return 0, err
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c.Buffered() == 2000 {
			break
		}
		if time.Now().After(end) {
			c.Close()
			return 0, errors.New("the buffer did not fill")
		}
	}
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return 0, err
	}
	defer p.Signal(syscall.SIGCONT)
	for range 1500 { // below half: the refill starts and hangs
		if _, err := c.GenId(context.Background()); err != nil {
			return 0, err
		}
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	c.Close()
	return time.Since(start), nil
}

// Failover: servers A and B; A is stopped (SIGSTOP) for the rest of the
// run while callers call GenId.
type Failover struct {
	Calls, Failed int
	// After counts the calls that started one call timeout after A
	// stopped, and AfterOK those of them that succeeded.
	After, AfterOK int
	Duplicates     int
}

func (e *Env) Failover(callers int, callTimeout, d time.Duration) (Failover, error) {
	var r Failover
	a, err := e.start("", 3)
	if err != nil {
		return r, err
	}
	defer a.Stop()
	b, err := e.start("", 4)
	if err != nil {
		return r, err
	}
	defer b.Stop()
	c, err := client.New([]string{a.Addr, b.Addr}, client.WithLogger(quiet), client.WithCallTimeout(callTimeout))
	if err != nil {
		return r, err
	}
	defer c.Close()
	var stoppedAt atomic.Pointer[time.Time]
	time.AfterFunc(d/5, func() {
		now := time.Now()
		stoppedAt.Store(&now)
		_ = a.Signal(syscall.SIGSTOP)
	})
	defer a.Signal(syscall.SIGCONT)
	recs, ids := Load(stopAfter(d), callers, 0, genId(c))
	from := stoppedAt.Load().Add(callTimeout)
	for _, rec := range recs {
		r.Calls++
		if rec.Err != nil {
			r.Failed++
		}
		if rec.Start.After(from) {
			r.After++
			if rec.Err == nil {
				r.AfterOK++
			}
		}
	}
	r.Duplicates = Duplicates(ids)
	return r, nil
}

// Restart: the only server is stopped (SIGTERM) and started again on the
// same port while callers call GenId.
type Restart struct {
	Calls, Failed int
	// FirstOK is the time from the restarted server's "listening" to the
	// end of the first call that succeeded after it.
	FirstOK    time.Duration
	Duplicates int
}

func (e *Env) Restart(callers int, down time.Duration) (Restart, error) {
	var r Restart
	p, err := e.start("127.0.0.1:0", 5)
	if err != nil {
		return r, err
	}
	c, err := client.New([]string{p.Addr}, client.WithLogger(quiet))
	if err != nil {
		p.Stop()
		return r, err
	}
	defer c.Close()
	stop := make(chan struct{})
	var p2 *Proc
	var restartErr error
	go func() {
		defer close(stop)
		time.Sleep(300 * time.Millisecond)
		p.Stop()
		time.Sleep(down)
		if p2, restartErr = p.Restart(); restartErr == nil {
			time.Sleep(time.Second)
		}
	}()
	recs, ids := Load(stop, callers, 0, genId(c))
	if restartErr != nil {
		return r, restartErr
	}
	defer p2.Stop()
	r.FirstOK = -1
	for _, rec := range recs {
		r.Calls++
		if rec.Err != nil {
			r.Failed++
		} else if rec.End.After(p2.Listening) && (r.FirstOK < 0 || rec.End.Sub(p2.Listening) < r.FirstOK) {
			r.FirstOK = rec.End.Sub(p2.Listening)
		}
	}
	r.Duplicates = Duplicates(ids)
	return r, nil
}

// Rolling: servers A and B; A is killed (SIGKILL) and restarted; one
// second after it listens again, B is killed.
type Rolling struct {
	Calls, Failed int
	// FailedWhileUp counts the failed calls that started while a server
	// was up, one call timeout or more after a kill.
	FailedWhileUp int
	LastErr       string // of those, the last one
	Duplicates    int
}

func (e *Env) Rolling(callers int, callTimeout time.Duration) (Rolling, error) {
	var r Rolling
	a, err := e.start("127.0.0.1:0", 6)
	if err != nil {
		return r, err
	}
	b, err := e.start("", 7)
	if err != nil {
		a.Kill()
		return r, err
	}
	defer b.Kill()
	c, err := client.New([]string{a.Addr, b.Addr}, client.WithLogger(quiet), client.WithCallTimeout(callTimeout))
	if err != nil {
		a.Kill()
		return r, err
	}
	defer c.Close()
	stop := make(chan struct{})
	var (
		a2           *Proc
		killA, killB time.Time
		restartErr   error
	)
	go func() {
		defer close(stop)
		time.Sleep(300 * time.Millisecond)
		killA = time.Now()
		a.Kill()
		if a2, restartErr = a.Restart(); restartErr != nil {
			return
		}
		time.Sleep(time.Second)
		killB = time.Now()
		b.Kill()
		time.Sleep(callTimeout + time.Second)
	}()
	recs, ids := Load(stop, callers, 0, genId(c))
	if restartErr != nil {
		return r, restartErr
	}
	defer a2.Kill()
	grace := func(t, kill time.Time) bool { return !t.Before(kill) && t.Before(kill.Add(callTimeout)) }
	for _, rec := range recs {
		r.Calls++
		if rec.Err == nil {
			continue
		}
		r.Failed++
		// A server is up all along: B until killB, A again before.
		if !grace(rec.Start, killA) && !grace(rec.Start, killB) {
			r.FailedWhileUp++
			r.LastErr = rec.Err.Error()
		}
	}
	r.Duplicates = Duplicates(ids)
	return r, nil
}

// Wire: what the server answers to a huge tag, a call past its deadline
// and unknown MakeId fields, through a raw net/rpc client.
type Wire struct {
	HugeTagErrLen   int    // characters of the error for a 100 KB tag
	PastDeadlineIds int    // IDs issued for a GenIds(5) past its deadline
	PastDeadlineErr string // and its error
	UnknownBitsErr  string // the error for MakeIdArgs.Set 0x20
}

func (e *Env) Wire() (Wire, error) {
	var r Wire
	p, err := e.start("", 8)
	if err != nil {
		return r, err
	}
	defer p.Stop()
	c, err := client.New([]string{p.Addr}, client.WithLogger(quiet))
	if err != nil {
		return r, err
	}
	defer c.Close()
	_, err = c.NextIds(context.Background(), strings.Repeat("x", 100_000)+" ", 1)
	if err == nil {
		return r, errors.New("a 100 KB tag was accepted")
	}
	r.HugeTagErrLen = len(err.Error())
	raw, err := rpc.Dial("tcp", p.Addr)
	if err != nil {
		return r, err
	}
	defer raw.Close()
	var ids rpcapi.GenIdsReply
	if err := raw.Call(rpcapi.ServiceName+".GenIds", rpcapi.GenIdsArgs{Count: 5, Timeout: -time.Second}, &ids); err != nil {
		return r, err
	}
	r.PastDeadlineIds = len(ids.Ids)
	if ids.Err != nil {
		r.PastDeadlineErr = ids.Err.Error()
	}
	var made rpcapi.MakeIdReply
	if err := raw.Call(rpcapi.ServiceName+".MakeId", rpcapi.MakeIdArgs{Time: 1, Seq: 1, Set: 0x20}, &made); err != nil {
		return r, err
	}
	if made.Err != nil {
		r.UnknownBitsErr = made.Err.Error()
	}
	return r, nil
}
