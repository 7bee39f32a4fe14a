package rpcserver

import (
	"net/rpc"
	"sync"
	"sync/atomic"
)

// workers run one connection's calls. net/rpc's ServeCodec reads calls on
// one goroutine and starts a goroutine for each call it reads: per call,
// a goroutine start, its stack grown on the way into the method, and the
// reply usually written only after the reading goroutine has tried the
// socket again. Here a worker that holds the read turn reads one call (with
// net/rpc's ServeRequest), hands the turn on, to an idle worker or to a
// new one, then runs the call and writes its reply. A slow call holds up
// no other, as with ServeCodec, but a worker outlives its call: on a busy
// connection no goroutine starts per call, and the reply goes out before
// the next read waits on the socket. (A reply may thus overtake an earlier
// call's; net/rpc clients pair replies by sequence number.)
//
// At most maxIdle workers wait for the turn; one more that finishes its
// call exits. So a connection holds, beside its calls in flight, its
// serving goroutine (serveCalls), the worker reading and maxIdle more.
type workers struct {
	rs      *rpc.Server
	codec   *serverCodec
	next    chan struct{} // hands the read turn to an idle worker
	done    chan struct{} // closed once reading stopped: the idle exit
	idle    atomic.Int32  // workers waiting for the turn
	stopped atomic.Bool
	wg      sync.WaitGroup
}

// maxIdle is how many workers of a connection wait for the read turn.
const maxIdle = 4

// serveCalls serves codec's calls with rs until reading stops, waits for
// the calls read to be answered, and closes codec.
func serveCalls(rs *rpc.Server, codec *serverCodec) {
	w := &codec.workers
	w.rs, w.codec = rs, codec
	w.next, w.done = make(chan struct{}), make(chan struct{})
	w.wg.Add(1)
	w.work(true)
	w.wg.Wait()
	codec.Close()
}

// passTurn hands the read turn to an idle worker, or to a new one. It is
// called by the holder of the turn, once the call it read is read.
func (w *workers) passTurn() {
	select {
	case w.next <- struct{}{}:
	default:
		w.wg.Add(1)
		go w.work(true)
	}
}

// stop says that reading stopped (called by the holder of the turn, which
// keeps it): the idle workers exit, and so does each busy one after its
// call.
func (w *workers) stop() {
	w.stopped.Store(true)
	close(w.done)
}

// work reads a call when it holds the read turn (turn), runs it and
// writes its reply, then waits for the turn again, or exits.
func (w *workers) work(turn bool) {
	defer w.wg.Done()
	for {
		if !turn {
			if w.idle.Add(1) > maxIdle {
				w.idle.Add(-1)
				return
			}
			select {
			case <-w.next:
				w.idle.Add(-1)
			case <-w.done:
				return
			}
		}
		_ = w.rs.ServeRequest(w.codec) // its error was answered, or stopped reading
		if w.stopped.Load() {
			return
		}
		turn = false
	}
}
