// Command soak drives REST and RPC load on a small vesta-go fleet while
// injecting faults, and checks that no ID is ever issued twice. It is run
// by scripts/soak.sh, which builds the binaries it starts:
//
//	soak -bin DIR -dir WORKDIR -duration 10m
//
// The fleet, all on 127.0.0.1: one etcd (soaketcd), one throw-away
// PostgreSQL (initdb + pg_ctl from /usr/lib/postgresql/*/bin), -rest
// server-rest and -rpc server-rpc nodes with leased machine ids
// (--machine-provider etcd), each with its own data dir, and segment mode
// on the shared PostgreSQL (tag "soak"). Without PostgreSQL the nodes run
// with segment mode off, and the PostgreSQL faults and the segment load
// are skipped (said loudly).
//
// The load: HTTP clients asking /genid?count=N and /segment/soak?count=N
// of random REST nodes, and callers of one failover RPC client
// (client.New) over the RPC nodes asking GenIds and NextIds. Every ID
// answered is kept; at the end they are sorted and any ID seen twice is a
// duplicate.
//
// The faults: kill -9 of a random node every -kill-every (restarted at
// once on the same port and data dir), SIGSTOP of etcd for -etcd-stop-for
// every -etcd-stop-every, and pg_ctl restart -m immediate every
// -pg-restart-every.
//
// It prints the IDs issued by kind, the duplicates (exit 1 if any), the
// errors by kind, every node's RSS at the start and the end, and the
// faults injected.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/pgtest"
)

type opts struct {
	bin, dir                              string
	duration                              time.Duration
	rest, rpc                             int
	httpWorkers, rpcWorkers               int
	batch, segBatch                       int
	pause                                 time.Duration
	killEvery, etcdStopEvery, etcdStopFor time.Duration
	pgRestartEvery                        time.Duration
	etcdFirst, pgFirst                    time.Duration
	leaseTTL                              time.Duration
	keep                                  bool
}

func main() {
	var o opts
	flag.StringVar(&o.bin, "bin", "", "directory holding server-rest, server-rpc and soaketcd (required)")
	flag.StringVar(&o.dir, "dir", "", "work directory (data dirs, logs); default a new temp dir, removed at the end")
	flag.DurationVar(&o.duration, "duration", 2*time.Minute, "how long the load runs")
	flag.IntVar(&o.rest, "rest", 3, "server-rest nodes")
	flag.IntVar(&o.rpc, "rpc", 2, "server-rpc nodes")
	flag.IntVar(&o.httpWorkers, "http-workers", 4, "HTTP clients (each alternates /genid and /segment/soak)")
	flag.IntVar(&o.rpcWorkers, "rpc-workers", 2, "RPC callers (each alternates GenIds and NextIds)")
	flag.IntVar(&o.batch, "batch", 200, "IDs per /genid and GenIds call")
	flag.IntVar(&o.segBatch, "segment-batch", 50, "IDs per /segment/soak and NextIds call")
	flag.DurationVar(&o.pause, "pause", 5*time.Millisecond, "pause of each worker between calls")
	flag.DurationVar(&o.killEvery, "kill-every", 30*time.Second, "kill -9 a random node this often (0: never)")
	flag.DurationVar(&o.etcdStopEvery, "etcd-stop-every", 2*time.Minute, "SIGSTOP etcd this often (0: never)")
	flag.DurationVar(&o.etcdStopFor, "etcd-stop-for", 10*time.Second, "how long etcd stays stopped")
	flag.DurationVar(&o.etcdFirst, "etcd-first", time.Minute, "when etcd is stopped first")
	flag.DurationVar(&o.pgRestartEvery, "pg-restart-every", 3*time.Minute, "restart PostgreSQL (-m immediate) this often (0: never)")
	flag.DurationVar(&o.pgFirst, "pg-first", 90*time.Second, "when PostgreSQL is restarted first")
	flag.DurationVar(&o.leaseTTL, "lease-ttl", 10*time.Second, "the nodes' --lease-ttl")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory")
	flag.Parse()
	if o.bin == "" || o.rest+o.rpc == 0 {
		fmt.Fprintln(os.Stderr, "soak: -bin is required, and at least one node")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// logf prints a line with the time since the start.
var start = time.Now()

func logf(format string, a ...any) {
	fmt.Printf("[%7.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
}

func run(ctx context.Context, o opts) (int, error) {
	if o.dir == "" {
		d, err := os.MkdirTemp("", "vesta-soak-")
		if err != nil {
			return 1, err
		}
		o.dir = d
	}
	if !o.keep {
		defer os.RemoveAll(o.dir)
	} else {
		defer fmt.Println("work directory kept:", o.dir)
	}
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()

	// etcd.
	etcdPort, err := freePortPair()
	if err != nil {
		return 1, err
	}
	etcd, err := startEtcd(o, etcdPort)
	if err != nil {
		return 1, err
	}
	cleanups = append(cleanups, etcd.stop)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	logf("etcd up on %s (pid %d)", etcdURL, etcd.cmd.Process.Pid)

	// PostgreSQL.
	pg, err := pgtest.Start(ctx, pgtest.Options{Fsync: true})
	if errors.Is(err, pgtest.ErrNoPostgres) {
		fmt.Println("!!! SKIPPING the PostgreSQL faults and the segment load: " + err.Error())
		fmt.Println("!!! the nodes run with segment mode off")
		pg = nil
	} else if err != nil {
		return 1, err
	} else {
		cleanups = append(cleanups, func() { _ = pg.Destroy() })
		logf("PostgreSQL up: %s", pg.DSN("postgres"))
	}

	// The fleet.
	var nodes []*node
	for i := range o.rest + o.rpc {
		kind := "rest"
		if i >= o.rest {
			kind = "rpc"
		}
		port, err := freePort()
		if err != nil {
			return 1, err
		}
		n := &node{name: fmt.Sprintf("%s-%d", kind, i), kind: kind, addr: fmt.Sprintf("127.0.0.1:%d", port),
			dataDir: filepath.Join(o.dir, "node-"+strconv.Itoa(i)), logFile: filepath.Join(o.dir, fmt.Sprintf("node-%d.log", i))}
		n.args = []string{"--listen", n.addr, "--data-dir", n.dataDir, "--machine-provider", "etcd",
			"--etcd-endpoints", etcdURL, "--lease-ttl", o.leaseTTL.String(), "--log-level", "warn"}
		if pg != nil {
			n.args = append(n.args, "--segment-store", "postgres", "--segment-dsn", pg.DSN("postgres"), "--segment-tags", "soak")
		} else {
			n.args = append(n.args, "--segment-store", "off")
		}
		n.bin = filepath.Join(o.bin, "server-"+kind)
		nodes = append(nodes, n)
	}
	cleanups = append(cleanups, func() {
		for _, n := range nodes {
			n.kill()
		}
	})
	for _, n := range nodes { // one after the other: the first creates the tag
		if err := n.start(ctx); err != nil {
			return 1, err
		}
		logf("%s up on %s (pid %d)", n.name, n.addr, n.pid())
	}
	for _, n := range nodes {
		n.rssStart = rss(n.pid())
	}

	// Load and faults.
	col := newCollector()
	loadCtx, cancelLoad := context.WithTimeout(ctx, o.duration)
	defer cancelLoad()
	var wg sync.WaitGroup
	var restNodes []*node
	var rpcAddrs []string
	for _, n := range nodes {
		if n.kind == "rest" {
			restNodes = append(restNodes, n)
		} else {
			rpcAddrs = append(rpcAddrs, n.addr)
		}
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for w := range min(o.httpWorkers, len(restNodes)*o.httpWorkers) {
		if len(restNodes) == 0 {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			httpWorker(loadCtx, o, hc, restNodes, col, pg != nil, w)
		}()
	}
	var rc *client.Client
	if len(rpcAddrs) > 0 {
		rc, err = client.New(rpcAddrs, client.WithCallTimeout(3*time.Second), client.WithLogger(slogDiscard()))
		if err != nil {
			return 1, err
		}
		for w := range o.rpcWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rpcWorker(loadCtx, o, rc, col, pg != nil, w)
			}()
		}
	}
	logf("load running for %s: %d HTTP workers on %d REST nodes, %d RPC callers on %d RPC nodes",
		o.duration, o.httpWorkers, len(restNodes), o.rpcWorkers, len(rpcAddrs))
	var faults faultLog
	var fwg sync.WaitGroup
	fwg.Add(1)
	go func() {
		defer fwg.Done()
		injectFaults(loadCtx, o, nodes, etcd, pg, &faults)
	}()
	progress := time.NewTicker(30 * time.Second)
loop:
	for {
		select {
		case <-loadCtx.Done():
			break loop
		case <-progress.C:
			v, s, e := col.counts()
			logf("progress: %d Vesta IDs, %d segment IDs, %d errors", v, s, e)
		}
	}
	progress.Stop()
	wg.Wait()
	fwg.Wait()
	if rc != nil {
		rc.Close()
	}
	interrupted := ctx.Err() != nil
	for _, n := range nodes {
		n.rssEnd = rss(n.pid())
	}
	logf("load stopped; stopping the fleet")
	for _, n := range nodes {
		n.terminate()
	}

	// The report.
	code := report(o, col, nodes, &faults, pg != nil)
	if interrupted {
		fmt.Println("interrupted before the full duration")
		if code == 0 {
			code = 1
		}
	}
	return code, nil
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// ---- processes ----

type etcdProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func startEtcd(o opts, port int) (*etcdProc, error) {
	cmd := exec.Command(filepath.Join(o.bin, "soaketcd"), "-dir", filepath.Join(o.dir, "etcd"), "-port", strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logFile, err := os.Create(filepath.Join(o.dir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e := &etcdProc{cmd: cmd, exited: make(chan struct{})}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
	}()
	go func() { cmd.Wait(); logFile.Close(); close(e.exited) }()
	select {
	case <-ready:
		return e, nil
	case <-e.exited:
		return nil, fmt.Errorf("etcd exited at start (see %s)", logFile.Name())
	case <-time.After(60 * time.Second):
		e.stop()
		return nil, errors.New("etcd did not start within 60s")
	}
}

func (e *etcdProc) stop() {
	_ = e.cmd.Process.Signal(syscall.SIGCONT)
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(10 * time.Second):
		_ = e.cmd.Process.Kill()
		<-e.exited
	}
}

// node is one server-rest or server-rpc process; restarted on the same
// address and data dir after a kill.
type node struct {
	name, kind, addr, dataDir, logFile, bin string
	args                                    []string

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	restarts int
	rssStart int64
	rssEnd   int64
}

func (n *node) pid() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// start starts the process and waits until it is ready: /readyz 200 for
// REST, an answered GenId for RPC.
func (n *node) start(ctx context.Context) error {
	lf, err := os.OpenFile(n.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(n.bin, n.args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); lf.Close(); close(exited) }()
	n.mu.Lock()
	n.cmd, n.exited = cmd, exited
	n.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("%s exited at start (see %s)", n.name, n.logFile)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if n.ready() {
			return nil
		}
	}
	return fmt.Errorf("%s not ready within 60s (see %s)", n.name, n.logFile)
}

func (n *node) ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if n.kind == "rest" {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.addr+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	c, err := client.New([]string{n.addr}, client.WithLogger(slogDiscard()))
	if err != nil {
		return false
	}
	defer c.Close()
	_, err = c.GenId(ctx)
	return err == nil
}

// kill sends SIGKILL and waits for the exit.
func (n *node) kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// terminate stops the node gracefully (SIGTERM), killing it after 20 s.
func (n *node) terminate() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		fmt.Printf("%s did not stop within 20s of SIGTERM: killed\n", n.name)
		n.kill()
	}
}

// lastFailure is the error of the last "server-... failed" line of a
// node's log, shortened.
func lastFailure(logFile string) string {
	b, _ := os.ReadFile(logFile)
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], " failed\" err=") {
			_, e, _ := strings.Cut(lines[i], "err=")
			e = strings.Trim(e, `"`)
			if len(e) > 110 {
				e = e[:110] + "..."
			}
			return e
		}
	}
	return "exited at start"
}

// rss is the resident set size of pid in bytes (VmRSS), 0 if unknown.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePortPair finds a port p with p+1 also free (etcd's client and peer).
func freePortPair() (int, error) {
	for range 50 {
		p, err := freePort()
		if err != nil {
			return 0, err
		}
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
			l.Close()
			return p, nil
		}
	}
	return 0, errors.New("no two consecutive free ports")
}

// ---- faults ----

type faultLog struct {
	mu     sync.Mutex
	lines  []string
	counts map[string]int
}

func (f *faultLog) add(kind, format string, a ...any) {
	line := fmt.Sprintf("[%7.1fs] ", time.Since(start).Seconds()) + fmt.Sprintf(format, a...)
	fmt.Println(line)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	f.counts[kind]++
	f.lines = append(f.lines, line)
}

// injectFaults runs the three schedules until ctx ends.
func injectFaults(ctx context.Context, o opts, nodes []*node, etcd *etcdProc, pg *pgtest.Server, faults *faultLog) {
	var wg sync.WaitGroup
	every := func(first, period time.Duration, f func()) {
		if period <= 0 {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// At first, first+period, first+2*period, ... since the load
			// began (one skipped if f overran it).
			next := time.Now().Add(first)
			for {
				t := time.NewTimer(time.Until(next))
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				f()
				for !next.After(time.Now()) {
					next = next.Add(period)
				}
			}
		}()
	}
	every(o.killEvery, o.killEvery, func() {
		n := nodes[rand.IntN(len(nodes))]
		pid := n.pid()
		t0 := time.Now()
		n.kill()
		n.mu.Lock()
		n.restarts++
		n.mu.Unlock()
		// Restarted as a supervisor would: again after a start that
		// fails (a node exits when etcd or PostgreSQL is unreachable at
		// start), for up to 2 minutes; this may outlive the load.
		var refused []string
		for {
			err := n.start(context.Background())
			if err == nil {
				break
			}
			refused = append(refused, lastFailure(n.logFile))
			if time.Since(t0) > 2*time.Minute {
				faults.add("kill -9 a node", "kill -9 %s (pid %d): restart FAILED for 2 minutes: %v", n.name, pid, err)
				return
			}
			time.Sleep(time.Second)
		}
		why := ""
		if len(refused) > 0 {
			why = fmt.Sprintf(" (%d start(s) failed first: %s)", len(refused), refused[len(refused)-1])
		}
		faults.add("kill -9 a node", "kill -9 %s (pid %d); restarted as pid %d, ready in %s%s", n.name, pid, n.pid(), time.Since(t0).Round(time.Millisecond), why)
	})
	every(o.etcdFirst, o.etcdStopEvery, func() {
		_ = etcd.cmd.Process.Signal(syscall.SIGSTOP)
		faults.add("SIGSTOP etcd", "SIGSTOP etcd (pid %d) for %s", etcd.cmd.Process.Pid, o.etcdStopFor)
		select {
		case <-time.After(o.etcdStopFor):
		case <-ctx.Done():
		}
		_ = etcd.cmd.Process.Signal(syscall.SIGCONT)
		faults.add("SIGCONT etcd", "SIGCONT etcd")
	})
	if pg != nil {
		every(o.pgFirst, o.pgRestartEvery, func() {
			t0 := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			err := pg.CrashRestart(ctx)
			cancel()
			if err != nil {
				faults.add("restart PostgreSQL", "pg_ctl restart -m immediate FAILED: %v", err)
				return
			}
			faults.add("restart PostgreSQL", "pg_ctl restart -m immediate: up again in %s", time.Since(t0).Round(time.Millisecond))
		})
	}
	wg.Wait()
}

// ---- load ----

// collector keeps every ID answered and counts errors by kind.
type collector struct {
	mu      sync.Mutex
	vesta   map[string][][]int64 // by door: rest, rpc
	segment map[string][][]int64
	nV, nS  int
	errs    map[string]int
	nErr    int
}

func newCollector() *collector {
	return &collector{vesta: map[string][][]int64{}, segment: map[string][][]int64{}, errs: map[string]int{}}
}

func (c *collector) ids(seg bool, door string, ids []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if seg {
		c.segment[door] = append(c.segment[door], ids)
		c.nS += len(ids)
	} else {
		c.vesta[door] = append(c.vesta[door], ids)
		c.nV += len(ids)
	}
}

func (c *collector) err(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs[kind]++
	c.nErr++
}

func (c *collector) counts() (v, s, e int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nV, c.nS, c.nErr
}

func pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func httpWorker(ctx context.Context, o opts, hc *http.Client, nodes []*node, col *collector, segments bool, w int) {
	for i := w; ctx.Err() == nil; i++ {
		n := nodes[rand.IntN(len(nodes))]
		seg := segments && i%2 == 1
		path := fmt.Sprintf("/genid?count=%d", o.batch)
		want := o.batch
		if seg {
			path = fmt.Sprintf("/segment/soak?count=%d", o.segBatch)
			want = o.segBatch
		}
		route := strings.SplitN(path, "?", 2)[0]
		ids, kind := httpCall(ctx, hc, "http://"+n.addr+path, want)
		switch {
		case kind == "":
			col.ids(seg, "rest", ids)
		case ctx.Err() != nil: // the load's end cut the call
		default:
			col.err("rest " + route + " " + kind)
		}
		pause(ctx, o.pause)
	}
}

// httpCall gets want IDs; kind is "" on success, else the error's kind.
func httpCall(ctx context.Context, hc *http.Client, url string, want int) ([]int64, string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, "transport: " + transportKind(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "transport: body cut: " + transportKind(err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := string(body)
		if i := strings.Index(msg, `"error":"`); i >= 0 {
			msg = msg[i+9:]
			msg, _, _ = strings.Cut(msg, ":")
			msg, _, _ = strings.Cut(msg, `"`)
		}
		if len(msg) > 60 {
			msg = msg[:60]
		}
		return nil, fmt.Sprintf("HTTP %d (%s)", resp.StatusCode, msg)
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) != want {
		return nil, fmt.Sprintf("malformed: %d IDs, want %d", len(lines), want)
	}
	ids := make([]int64, len(lines))
	for i, l := range lines {
		id, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return nil, "malformed: not an ID"
		}
		ids[i] = id
	}
	return ids, ""
}

func transportKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return fmt.Sprintf("%T", errors.Unwrap(err))
}

func rpcWorker(ctx context.Context, o opts, c *client.Client, col *collector, segments bool, w int) {
	for i := w; ctx.Err() == nil; i++ {
		seg := segments && i%2 == 1
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var ids []int64
		var err error
		method := "GenIds"
		if seg {
			method = "NextIds"
			ids, err = c.NextIds(callCtx, "soak", o.segBatch)
		} else {
			ids, err = int64s(c.GenIds(callCtx, o.batch))
		}
		cancel()
		switch {
		case err == nil:
			col.ids(seg, "rpc", ids)
		case ctx.Err() != nil:
		default:
			col.err("rpc " + method + " " + rpcKind(err))
		}
		pause(ctx, o.pause)
	}
}

func rpcKind(err error) string {
	var we *rpcapi.Error
	var te *rpcapi.TransportError
	switch {
	case errors.As(err, &we):
		return fmt.Sprintf("code %d (%s)", we.Code, we.Code)
	case errors.As(err, &te):
		return "transport: " + transportKind(te.Err)
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline exceeded (client)"
	case errors.Is(err, intf.ErrUnavailable):
		return "unavailable (client: no server answered)"
	}
	msg := err.Error()
	if len(msg) > 60 {
		msg = msg[:60]
	}
	return "other: " + msg
}

// int64s is a GenIds answer as the int64s the collector keeps for both
// kinds of ID (segment IDs are plain counters).
func int64s(ids []intf.Id, err error) ([]int64, error) {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out, err
}

// ---- report ----

// dupes sorts all ids and returns how many there are and how many are
// repeats, with a few examples.
func dupes(parts map[string][][]int64) (total, dup int, examples []int64) {
	for _, ps := range parts {
		for _, p := range ps {
			total += len(p)
		}
	}
	all := make([]int64, 0, total)
	for _, ps := range parts {
		for _, p := range ps {
			all = append(all, p...)
		}
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			dup++
			if len(examples) < 5 {
				examples = append(examples, all[i])
			}
		}
	}
	return total, dup, examples
}

func count(ps [][]int64) int {
	n := 0
	for _, p := range ps {
		n += len(p)
	}
	return n
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func report(o opts, col *collector, nodes []*node, faults *faultLog, segments bool) int {
	col.mu.Lock()
	defer col.mu.Unlock()
	fmt.Println()
	fmt.Printf("=== soak: %s, %d REST + %d RPC nodes, %d HTTP workers + %d RPC callers ===\n",
		o.duration, o.rest, o.rpc, o.httpWorkers, o.rpcWorkers)
	fmt.Println()
	fmt.Println("IDs issued:")
	fmt.Printf("  Vesta IDs    %10d  (REST /genid %d, RPC GenIds %d)\n", col.nV, count(col.vesta["rest"]), count(col.vesta["rpc"]))
	if segments {
		fmt.Printf("  segment IDs  %10d  (REST /segment/soak %d, RPC NextIds %d)\n", col.nS, count(col.segment["rest"]), count(col.segment["rpc"]))
	} else {
		fmt.Println("  segment IDs  skipped (no PostgreSQL)")
	}
	machines := map[int64]bool{}
	for _, ps := range col.vesta {
		for _, p := range ps {
			for _, id := range p {
				machines[intf.Id(id).Fields().Machine] = true
			}
		}
	}
	ms := make([]int64, 0, len(machines))
	for m := range machines {
		ms = append(ms, m)
	}
	slices.Sort(ms)
	fmt.Printf("  machine ids seen in the Vesta IDs: %v\n", ms)
	fmt.Println()
	_, vd, vex := dupes(col.vesta)
	_, sd, sex := dupes(col.segment)
	fmt.Println("Duplicates (must be 0):")
	fmt.Printf("  Vesta IDs    %d %v\n", vd, vex)
	fmt.Printf("  segment IDs  %d %v\n", sd, sex)
	fmt.Println()
	fmt.Printf("Errors by kind (%d in all):\n", col.nErr)
	kinds := make([]string, 0, len(col.errs))
	for k := range col.errs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Printf("  %6d  %s\n", col.errs[k], k)
	}
	if len(kinds) == 0 {
		fmt.Println("  none")
	}
	fmt.Println()
	fmt.Println("Memory (VmRSS) at the start of the load and at its end:")
	for _, n := range nodes {
		fmt.Printf("  %-7s start %10s   end %10s   (killed and restarted %d times; end is pid %d)\n",
			n.name, mib(n.rssStart), mib(n.rssEnd), n.restarts, n.pid())
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Printf("  driver  heap in use %s (holding every ID)\n", mib(int64(m.HeapInuse)))
	fmt.Println()
	faults.mu.Lock()
	fmt.Printf("Faults injected (%d):\n", len(faults.lines))
	fkinds := make([]string, 0, len(faults.counts))
	for k := range faults.counts {
		fkinds = append(fkinds, k)
	}
	sort.Strings(fkinds)
	for _, k := range fkinds {
		fmt.Printf("  %3d × %s\n", faults.counts[k], k)
	}
	if !segments {
		fmt.Println("  PostgreSQL restarts SKIPPED (no PostgreSQL)")
	}
	faults.mu.Unlock()
	fmt.Println()
	if vd+sd > 0 {
		fmt.Println("FAIL: duplicate IDs")
		return 1
	}
	fmt.Println("OK: no duplicates")
	return 0
}
