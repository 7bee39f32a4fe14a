// Command rpcabuse runs server-rpc under the hostile load of issue 16 and
// prints what a legitimate client sees:
//
//  1. GenId latency from 127.0.0.1 through client.New, without load (the
//     baseline);
//  2. the same while --idle connections from --from send nothing and
//     --slow connections from --from send a message header and then one
//     byte a second; each attacker redials --redial after the server
//     closes it;
//  3. the server's RSS before and after one connection sends a message
//     header claiming 8 GiB and then up to --huge zero bytes.
//
// Usage (scripts/bench-rpc-abuse.sh builds the binary):
//
//	go run ./scripts/rpcabuse --bin /tmp/server-rpc
//
// The attackers run in a child process (this program with --attack-addr),
// so that their garbage and goroutines do not slow the client measured.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vesta-go/vesta/client"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rpcabuse:", err)
		os.Exit(1)
	}
}

type config struct {
	bin                 string
	idle, slow, callers int
	from                string
	baseline, dur, ramp time.Duration
	redial              time.Duration
	huge                int64
	serverArgs          []string
	attackAddr          string
}

func run() error {
	var c config
	flag.StringVar(&c.bin, "bin", "", "the server-rpc binary (required)")
	flag.IntVar(&c.idle, "idle", 5000, "idle attacker connections")
	flag.IntVar(&c.slow, "slow", 1000, "slowly-writing attacker connections")
	flag.StringVar(&c.from, "from", "127.0.0.2", "the attackers' source address")
	flag.IntVar(&c.callers, "callers", 4, "concurrent GenId callers of the legitimate client")
	flag.DurationVar(&c.baseline, "baseline", 5*time.Second, "GenId time without attack")
	flag.DurationVar(&c.ramp, "ramp", 3*time.Second, "attack time before measuring")
	flag.DurationVar(&c.dur, "duration", 20*time.Second, "GenId time under attack")
	flag.DurationVar(&c.redial, "redial", time.Second, "an attacker's pause before redialling")
	flag.Int64Var(&c.huge, "huge", 1536<<20, "zero bytes to send after the 8 GiB header")
	flag.StringVar(&c.attackAddr, "attack-addr", "", "internal: run the attackers against this address until stdin closes")
	flag.Parse()
	c.serverArgs = flag.Args()
	if err := raiseFileLimit(c.idle + c.slow + 1000); err != nil {
		return err
	}
	if c.attackAddr != "" {
		return attackUntilStdinCloses(c)
	}
	if c.bin == "" {
		return errors.New("--bin is required")
	}
	srv, err := startServer(c.bin, c.serverArgs)
	if err != nil {
		return err
	}
	defer srv.kill()
	fmt.Printf("server-rpc %s on %s (pid %d)\n\n", strings.Join(c.serverArgs, " "), srv.addr, srv.cmd.Process.Pid)

	base := legit(srv.addr, c.callers, c.baseline)
	fmt.Println("| phase | GenId calls | errors | p50 | p99 | max |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	base.row("no attack")

	child, err := startAttackers(srv.addr, c)
	if err != nil {
		return err
	}
	time.Sleep(c.ramp)
	under := legit(srv.addr, c.callers, c.dur)
	summary, err := child.stop()
	if err != nil {
		return err
	}
	under.row(fmt.Sprintf("%d idle + %d slow conns from %s", c.idle, c.slow, c.from))
	fmt.Printf("\nattackers (%s redial pause): %s\n", c.redial, summary)

	if err := huge(srv, c); err != nil {
		return err
	}
	fmt.Println("\nserver totals:", srv.stop())
	return nil
}

// stats are one phase's GenId latencies.
type stats struct {
	lat    []time.Duration
	errors int
	first  error
}

func (s stats) row(phase string) {
	slices.Sort(s.lat)
	q := func(p float64) string {
		if len(s.lat) == 0 {
			return "n/a"
		}
		return s.lat[min(len(s.lat)-1, int(p*float64(len(s.lat))))].Round(time.Microsecond).String()
	}
	fmt.Printf("| %s | %d | %d | %s | %s | %s |\n", phase, len(s.lat), s.errors, q(0.5), q(0.99), q(1))
	if s.first != nil {
		fmt.Println("first error:", s.first)
	}
}

// legit calls GenId from callers goroutines of one client for d.
func legit(addr string, callers int, d time.Duration) stats {
	c, err := client.New([]string{addr})
	if err != nil {
		return stats{errors: 1, first: err}
	}
	defer c.Close()
	var mu sync.Mutex
	var all stats
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range callers {
		wg.Go(func() {
			var mine stats
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				t0 := time.Now()
				_, err := c.GenId(ctx)
				el := time.Since(t0)
				cancel()
				if err != nil {
					mine.errors++
					if mine.first == nil {
						mine.first = err
					}
					continue
				}
				mine.lat = append(mine.lat, el)
			}
			mu.Lock()
			all.lat = append(all.lat, mine.lat...)
			all.errors += mine.errors
			if all.first == nil {
				all.first = mine.first
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return all
}

// child is the attackers' process.
type child struct {
	cmd   *exec.Cmd
	stdin io.Closer
	out   *strings.Builder
}

func startAttackers(addr string, c config) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "--attack-addr", addr, "--from", c.from, "--idle", strconv.Itoa(c.idle),
		"--slow", strconv.Itoa(c.slow), "--redial", c.redial.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out := new(strings.Builder)
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &child{cmd: cmd, stdin: stdin, out: out}, nil
}

// stop ends the attack and returns the child's summary.
func (ch *child) stop() (string, error) {
	ch.stdin.Close()
	if err := ch.cmd.Wait(); err != nil {
		return "", fmt.Errorf("attackers: %w", err)
	}
	return strings.TrimSpace(ch.out.String()), nil
}

// attackUntilStdinCloses is the child's side.
func attackUntilStdinCloses(c config) error {
	ctx, cancel := context.WithCancel(context.Background())
	a := attack(ctx, c.attackAddr, c)
	_, _ = io.Copy(io.Discard, os.Stdin)
	held := a.held.Load()
	cancel()
	a.wg.Wait()
	fmt.Printf("%d dials, %d connections open at the end, %d closed by the server\n",
		a.dials.Load(), held, a.closed.Load())
	return nil
}

type attackers struct {
	wg                  sync.WaitGroup
	dials, held, closed atomic.Int64
}

// attack starts the idle and slow attackers; they stop with ctx.
func attack(ctx context.Context, addr string, c config) *attackers {
	a := &attackers{}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(c.from)}, Timeout: 10 * time.Second}
	one := func(slow bool) {
		defer a.wg.Done()
		for ctx.Err() == nil {
			a.dials.Add(1)
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err == nil {
				a.held.Add(1)
				stop := context.AfterFunc(ctx, func() { conn.Close() })
				if slow {
					holdSlow(ctx, conn)
				} else {
					_, _ = io.Copy(io.Discard, conn) // until the server closes it
				}
				stop()
				conn.Close()
				a.held.Add(-1)
				if ctx.Err() == nil {
					a.closed.Add(1)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(c.redial):
			}
		}
	}
	a.wg.Add(c.idle + c.slow)
	for range c.idle {
		go one(false)
	}
	for range c.slow {
		go one(true)
	}
	return a
}

// holdSlow sends a header claiming 1,000 bytes, then one byte a second,
// until the connection fails.
func holdSlow(ctx context.Context, conn net.Conn) {
	if _, err := conn.Write([]byte{0xfe, 0x03, 0xe8}); err != nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := conn.Write([]byte{0}); err != nil {
				return
			}
		}
	}
}

// huge sends a header claiming 8 GiB - 2 and then zeros, and prints the
// server's RSS.
func huge(srv *server, c config) error {
	before, err := rss(srv.cmd.Process.Pid)
	if err != nil {
		return err
	}
	conn, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(c.from)}}).Dial("tcp", srv.addr)
	if err != nil {
		return err
	}
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	var sent int64
	_, err = conn.Write([]byte{0xfb, 0x01, 0xff, 0xff, 0xff, 0xfe})
	zeros := make([]byte, 1<<20)
	for err == nil && sent < c.huge {
		var n int
		n, err = conn.Write(zeros)
		sent += int64(n)
	}
	during, rerr := rss(srv.cmd.Process.Pid)
	if rerr != nil {
		return rerr
	}
	conn.Close()
	time.Sleep(time.Second)
	after, rerr := rss(srv.cmd.Process.Pid)
	if rerr != nil {
		return rerr
	}
	fmt.Printf("\n8 GiB header from %s: %d MiB of %d MiB of zeros written before: %v\n", c.from, sent>>20, c.huge>>20, err)
	fmt.Printf("server RSS: %d MiB before, %d MiB after the writes, %d MiB 1s after the connection closed\n",
		before>>20, during>>20, after>>20)
	return nil
}

// rss is the resident set size of process pid.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// raiseFileLimit raises the soft limit on open files to at least n (up to
// the hard limit).
func raiseFileLimit(n int) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	if l.Cur >= uint64(n) {
		return nil
	}
	if l.Max < uint64(n) {
		return fmt.Errorf("open-file hard limit %d < %d needed", l.Max, n)
	}
	l.Cur = uint64(n)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("setrlimit: %w", err)
	}
	return nil
}

type server struct {
	cmd    *exec.Cmd
	addr   string
	totals chan string
}

// startServer starts bin on a free 127.0.0.1 port with a temporary data
// dir.
func startServer(bin string, args []string) (*server, error) {
	dir, err := os.MkdirTemp("", "rpcabuse")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"--listen", "127.0.0.1:0", "--data-dir", dir, "--machine", "1"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, totals: make(chan string, 1)}
	addr := make(chan string, 1)
	go func() {
		defer os.RemoveAll(dir)
		listening := regexp.MustCompile(`vesta: listening.* server=rpc addr=(\S+)`)
		totals := regexp.MustCompile(`connection totals"? (.*)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
			if m := totals.FindStringSubmatch(sc.Text()); m != nil {
				s.totals <- m[1]
			}
		}
		close(s.totals)
	}()
	select {
	case s.addr = <-addr:
		return s, nil
	case <-time.After(30 * time.Second):
		s.kill()
		return nil, errors.New("the server did not say where it listens")
	}
}

// stop sends SIGTERM and returns the server's connection totals.
func (s *server) stop() string {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	t := <-s.totals
	_ = s.cmd.Wait()
	return t
}

func (s *server) kill() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}
