package leasetest

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/internal/testbin"
)

// Rest is one run of the real server-rest, its log kept: what the lease
// tests of both coordinators and their conformance suite drive.
type Rest struct {
	Cmd  *exec.Cmd
	Base string // http://host:port
	logs *syncbuf.Buffer
	done chan struct{}
	err  error // the exit, once done is closed
}

// StartRest runs server-rest with args (and env, added to the test's) on
// a free loopback port, its log going to the test's log. At the test's end
// it is stopped with SIGTERM (so that its claim is released), and killed
// if that takes more than 20 s.
func StartRest(t testing.TB, env []string, args ...string) *Rest {
	t.Helper()
	bin := testbin.Must(t, "github.com/vesta-go/vesta/server-rest")
	listen := freePort(t)
	r := &Rest{Base: "http://" + listen, logs: &syncbuf.Buffer{}, done: make(chan struct{})}
	r.Cmd = exec.Command(bin, append(args, "--listen", listen)...)
	r.Cmd.Env = append(os.Environ(), env...)
	r.Cmd.Stdout, r.Cmd.Stderr = io.Discard, io.MultiWriter(Writer(t), r.logs)
	if err := r.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.Cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = r.Cmd.Process.Signal(syscall.SIGCONT) // in case a test stopped it
		_ = r.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			_ = r.Cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// handedOut holds the ports freePort gave this test binary: the kernel may
// give a port just closed to the next listen on port 0, and two servers
// started at once must not both be told to bind it.
var (
	handedOutMu sync.Mutex
	handedOut   = map[string]bool{}
)

// freePort is a loopback address free when asked and never handed out
// before in this test binary.
func freePort(t testing.TB) string {
	t.Helper()
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		if !handedOut[addr] {
			handedOut[addr] = true
			return addr
		}
	}
}

// Done is closed once the process has exited; Err is its exit then.
func (r *Rest) Done() <-chan struct{} { return r.done }
func (r *Rest) Err() error            { <-r.done; return r.err }
func (r *Rest) Logs() string          { return r.logs.String() }

// Exited tells whether the process has exited.
func (r *Rest) Exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Signal sends s; after SIGKILL it waits for the exit (a crash: nothing
// runs after it).
func (r *Rest) Signal(t testing.TB, s syscall.Signal) {
	t.Helper()
	if err := r.Cmd.Process.Signal(s); err != nil {
		t.Fatal(err)
	}
	if s == syscall.SIGKILL {
		<-r.done
	}
}

// Stop stops it with SIGTERM and requires a clean exit.
func (r *Rest) Stop(t testing.TB) {
	t.Helper()
	r.Signal(t, syscall.SIGTERM)
	select {
	case <-r.done:
		if r.err != nil {
			t.Fatalf("server-rest did not exit cleanly: %v", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server-rest did not stop on SIGTERM")
	}
}

// Get is GET path's status and trimmed body (0 and "" when the request
// failed).
func (r *Rest) Get(path string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(r.Base + path)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// GenID asks for one ID: the status code and the ID (0 unless 200).
func (r *Rest) GenID() (int, int64) {
	code, body := r.Get("/genid")
	id, err := strconv.ParseInt(body, 10, 64)
	if code != http.StatusOK || err != nil {
		return code, 0
	}
	return code, id
}

// FirstID waits until it answers /genid with an ID and returns it,
// failing if the process exits first.
func (r *Rest) FirstID(t testing.TB, limit time.Duration) int64 {
	t.Helper()
	var id int64
	Eventually(t, limit, "/genid answers 200", func() bool {
		if r.Exited() {
			t.Fatalf("server-rest exited: %v\n%s", r.err, r.Logs())
		}
		var code int
		code, id = r.GenID()
		return code == http.StatusOK
	})
	return id
}

// Issue takes n IDs, which it must issue.
func (r *Rest) Issue(t testing.TB, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		code, id := r.GenID()
		if code != http.StatusOK {
			t.Fatalf("/genid: %d", code)
		}
		ids[i] = id
	}
	return ids
}

// Logged waits until its log holds line (a lease logs after the service
// is up, so a line may follow the first ID).
func (r *Rest) Logged(t testing.TB, line string) {
	t.Helper()
	Eventually(t, 10*time.Second, "logged: "+line, func() bool { return strings.Contains(r.Logs(), line) })
}

// Metric is the value of an unlabelled metric ("" when missing).
func (r *Rest) Metric(name string) string {
	_, page := r.Get("/metrics")
	return MetricValue(page, name)
}

// Load asks for batches of 10,000 IDs until stop is closed; done returns
// them with the time of the last batch. issued says how many it has so
// far, while it runs, so that a test waits for IDs rather than a while.
func (r *Rest) Load(stop <-chan struct{}) (done func() ([]int64, time.Time), issued func() int) {
	var mu sync.Mutex
	var ids []int64
	var last time.Time
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-stop:
				return
			default:
			}
			code, body := r.Get("/genid?count=10000")
			if code != http.StatusOK {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			batch := make([]int64, 0, 10000)
			for _, f := range strings.Fields(body) {
				if id, err := strconv.ParseInt(f, 10, 64); err == nil {
					batch = append(batch, id)
				}
			}
			mu.Lock()
			ids, last = append(ids, batch...), time.Now()
			mu.Unlock()
		}
	}()
	done = func() ([]int64, time.Time) {
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return ids, last
	}
	issued = func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(ids)
	}
	return done, issued
}
