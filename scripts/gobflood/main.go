// Command gobflood floods server-rpc with gob type definitions and prints
// what the server's memory and a legitimate client see: each attacker
// connection (from --from) sends calls whose header defines --defs new
// struct types of --fields int fields each (and one more, the header's),
// redialling when the server closes it; meanwhile a client.New client
// calls GenId from 127.0.0.1. For each --conns count, on a fresh server:
// RSS (/proc/PID/status VmRSS) before, at its peak during --duration of
// attack, and how soon after the attack it is back within --near of the
// baseline (watched for --settle).
//
// Usage (Linux: the attackers dial from 127.0.0.2):
//
//	go build -o /tmp/server-rpc ./server-rpc
//	go run ./scripts/gobflood --bin /tmp/server-rpc
//	go run ./scripts/gobflood --bin /tmp/server-rpc --conns 16 -- --max-type-defs 64 # after --: server flags
//	go run ./scripts/gobflood --bin /tmp/server-rpc --attack-cpu 1 # the attackers in a child on CPU 1
//
// By default the attackers run in this process, beside the client, and
// take most of a 2-core machine's CPU themselves (the server closes each
// connection after a few bytes, so they redial and resend at once). With
// --attack-cpu they run in a child process pinned to those CPUs (taskset)
// at the lowest priority (nice 19), as an attacker on another host would:
// the client's latency then shows what the server's own work costs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/scripts/internal/rpcproc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gobflood:", err)
		os.Exit(1)
	}
}

type config struct {
	bin          string
	conns        []int
	defs, fields int
	from         string
	callers      int
	dur, settle  time.Duration
	near         int64
	serverArgs   []string
	attackCPU    string // run the attackers in a child pinned to these CPUs
}

func run() error {
	var c config
	conns := flag.String("conns", "1,16", "attacker connections, one run per count")
	flag.StringVar(&c.bin, "bin", "", "the server-rpc binary (required)")
	flag.IntVar(&c.defs, "defs", 20, "new struct types defined before each call's header")
	flag.IntVar(&c.fields, "fields", 7000, "int fields of each (7000 keep a definition under 64 KiB)")
	flag.StringVar(&c.from, "from", "127.0.0.2", "the attackers' source address")
	flag.IntVar(&c.callers, "callers", 4, "concurrent GenId callers of the legitimate client")
	flag.DurationVar(&c.dur, "duration", 20*time.Second, "attack time")
	flag.DurationVar(&c.settle, "settle", 10*time.Second, "RSS watched after the attack")
	near := flag.Int("near", 32, "MiB over the baseline that count as back near it")
	flag.StringVar(&c.attackCPU, "attack-cpu", "", "run the attackers in a child process pinned to these CPUs (taskset list, e.g. 1), niced")
	attackOnly := flag.String("attack-only", "", "internal: attack this address with --conns[0] connections for --duration, print sent and closed")
	flag.Parse()
	c.serverArgs, c.near = flag.Args(), int64(*near)<<20
	for _, s := range strings.Split(*conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("--conns %q: want counts ≥ 1", *conns)
		}
		c.conns = append(c.conns, n)
	}
	if *attackOnly != "" {
		sent, closed := attackFor(*attackOnly, c, c.conns[0])
		fmt.Println(sent, closed)
		return nil
	}
	if c.bin == "" {
		return errors.New("--bin is required")
	}
	var g gobBuf
	newFlood(c.defs, c.fields).call(&g)
	fmt.Printf("Flood: %d definitions of %d int fields per call, %d KiB per call\n\n", c.defs+1, c.fields, len(g.b)>>10)
	fmt.Println("| attacker conns | RSS before | RSS peak (growth) | back within", *near, "MiB after | RSS at +settle | GenId calls | errors | p50 | p99 | max | sent | server closed | server totals |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, n := range c.conns {
		if err := runOnce(c, n); err != nil {
			return err
		}
	}
	return nil
}

func runOnce(c config, conns int) error {
	srv, err := rpcproc.Start(c.bin, c.serverArgs)
	if err != nil {
		return err
	}
	defer srv.Kill()
	pid := srv.Pid()
	rpcproc.Legit(srv.Addr, c.callers, 2*time.Second) // warm: the service and the client's first allocations
	base, err := rpcproc.RSS(pid)
	if err != nil {
		return err
	}

	result, err := startAttack(srv.Addr, c, conns)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(context.Background())
	peak := base
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			if r, err := rpcproc.RSS(pid); err == nil {
				peak = max(peak, r)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	st := rpcproc.Legit(srv.Addr, c.callers, c.dur)
	sent, closed, err := result()
	stop()
	<-sampled
	if err != nil {
		return err
	}
	ended := time.Now()

	back := "not within " + c.settle.String()
	var last int64
	for time.Since(ended) < c.settle {
		if last, err = rpcproc.RSS(pid); err != nil {
			return err
		}
		if last <= base+c.near && strings.HasPrefix(back, "not") {
			back = time.Since(ended).Round(10 * time.Millisecond).String()
		}
		time.Sleep(100 * time.Millisecond)
	}
	totals := srv.Stop()
	fmt.Printf("| %d | %d MiB | %d MiB (+%d MiB) | %s | %d MiB | %s | %d MiB | %d | %s |\n",
		conns, base>>20, peak>>20, (peak-base)>>20, back, last>>20, row(st), sent>>20, closed, badTypes(totals))
	if st.First != nil {
		fmt.Println("first client error:", st.First)
	}
	return nil
}

// badTypes is the part of the server's totals line about this flood.
func badTypes(totals string) string {
	var keep []string
	for _, f := range strings.Fields(totals) {
		if strings.HasPrefix(f, "accepted=") || strings.HasPrefix(f, "tooBig=") || strings.HasPrefix(f, "badTypes=") {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}

// startAttack starts conns attackers on addr for c.dur, in this process
// or in a pinned child (--attack-cpu); result waits for them and says the
// bytes sent and the connections the server closed.
func startAttack(addr string, c config, conns int) (result func() (int64, int64, error), err error) {
	if c.attackCPU == "" {
		done := make(chan [2]int64, 1)
		go func() { s, cl := attackFor(addr, c, conns); done <- [2]int64{s, cl} }()
		return func() (int64, int64, error) { r := <-done; return r[0], r[1], nil }, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("taskset", "-c", c.attackCPU, "nice", "-n", "19", self, "--attack-only", addr,
		"--conns", strconv.Itoa(conns), "--duration", c.dur.String(), "--defs", strconv.Itoa(c.defs),
		"--fields", strconv.Itoa(c.fields), "--from", c.from)
	cmd.Stderr = os.Stderr
	out := new(strings.Builder)
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the attackers (taskset, nice): %w", err)
	}
	return func() (int64, int64, error) {
		if err := cmd.Wait(); err != nil {
			return 0, 0, fmt.Errorf("the attackers: %w", err)
		}
		var sent, closed int64
		_, err := fmt.Sscan(out.String(), &sent, &closed)
		return sent, closed, err
	}, nil
}

// attackFor runs conns attackers on addr for c.dur and returns the bytes
// sent and the connections the server closed.
func attackFor(addr string, c config, conns int) (sent, closed int64) {
	var first gobBuf
	newFlood(c.defs, c.fields).call(&first)
	ctx, stop := context.WithTimeout(context.Background(), c.dur)
	defer stop()
	var s, cl atomic.Int64
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() { attack(ctx, addr, c, first.b, &s, &cl) })
	}
	wg.Wait()
	return s.Load(), cl.Load()
}

// attack floods from c.from until ctx ends, redialling when the server
// closes the connection; sent counts the bytes written, closed the
// connections the server closed.
func attack(ctx context.Context, addr string, c config, first []byte, sent, closed *atomic.Int64) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(c.from)}, Timeout: 5 * time.Second}
	for ctx.Err() == nil {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go func() { <-ctx.Done(); conn.Close() }()
		go func() { // the replies: read and dropped, so the server never waits on them
			buf := make([]byte, 64<<10)
			for {
				if _, err := conn.Read(buf); err != nil {
					return
				}
			}
		}()
		f := newFlood(c.defs, c.fields)
		f.call(new(gobBuf)) // first: sent
		for call := 0; ctx.Err() == nil; call++ {
			b := first // every connection's first call is the same bytes
			if call > 0 {
				var g gobBuf
				f.call(&g)
				b = g.b
			}
			n, err := conn.Write(b)
			sent.Add(int64(n))
			if err != nil {
				if ctx.Err() == nil {
					closed.Add(1)
				}
				break
			}
		}
		conn.Close()
	}
}

// row is the legitimate client's columns of the table.
func row(s rpcproc.Stats) string {
	p50, p99, maximum := s.Percentiles(10 * time.Microsecond)
	return fmt.Sprintf("%d | %d | %s | %s | %s", len(s.Lat), s.Errors, p50, p99, maximum)
}
