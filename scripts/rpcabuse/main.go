// Command rpcabuse runs server-rpc under a hostile load and
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
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vesta-go/vesta/scripts/internal/rpcproc"
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
	srv, err := rpcproc.Start(c.bin, c.serverArgs)
	if err != nil {
		return err
	}
	defer srv.Kill()
	fmt.Printf("server-rpc %s on %s (pid %d)\n\n", strings.Join(c.serverArgs, " "), srv.Addr, srv.Pid())

	base := rpcproc.Legit(srv.Addr, c.callers, c.baseline)
	fmt.Println("| phase | GenId calls | errors | p50 | p99 | max |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	row(base, "no attack")

	child, err := startAttackers(srv.Addr, c)
	if err != nil {
		return err
	}
	time.Sleep(c.ramp)
	under := rpcproc.Legit(srv.Addr, c.callers, c.dur)
	summary, err := child.stop()
	if err != nil {
		return err
	}
	row(under, fmt.Sprintf("%d idle + %d slow conns from %s", c.idle, c.slow, c.from))
	fmt.Printf("\nattackers (%s redial pause): %s\n", c.redial, summary)

	if err := huge(srv, c); err != nil {
		return err
	}
	fmt.Println("\nserver totals:", srv.Stop())
	return nil
}

// row prints one phase's line of the table, and its first error.
func row(s rpcproc.Stats, phase string) {
	p50, p99, maximum := s.Percentiles(time.Microsecond)
	fmt.Printf("| %s | %d | %d | %s | %s | %s |\n", phase, len(s.Lat), s.Errors, p50, p99, maximum)
	if s.First != nil {
		fmt.Println("first error:", s.First)
	}
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
func huge(srv *rpcproc.Server, c config) error {
	before, err := rpcproc.RSS(srv.Pid())
	if err != nil {
		return err
	}
	conn, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(c.from)}}).Dial("tcp", srv.Addr)
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
	during, rerr := rpcproc.RSS(srv.Pid())
	if rerr != nil {
		return rerr
	}
	conn.Close()
	time.Sleep(time.Second)
	after, rerr := rpcproc.RSS(srv.Pid())
	if rerr != nil {
		return rerr
	}
	fmt.Printf("\n8 GiB header from %s: %d MiB of %d MiB of zeros written before: %v\n", c.from, sent>>20, c.huge>>20, err)
	fmt.Printf("server RSS: %d MiB before, %d MiB after the writes, %d MiB 1s after the connection closed\n",
		before>>20, during>>20, after>>20)
	return nil
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
