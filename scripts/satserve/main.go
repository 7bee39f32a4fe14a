// Command satserve measures server-rest or server-rpc at saturation: it
// starts the server binary (no data dir, on a free 127.0.0.1 port), then
// callers ask for batches flat out for a window — far more IDs than the
// layout's budget — and it prints the share of the budget served, the
// server process's CPU per wall second (/proc/PID/stat), the errors, the
// slowest call and the duplicates (every ID is kept and checked). So the
// cost of a saturated server waiting for the next unit can be read: the
// embedded figures are scripts/satprobe's. scripts/bench-saturation.sh
// runs both.
//
//	go build -o /tmp/server-rest ./server-rest
//	go run ./scripts/satserve -server rest -bin /tmp/server-rest -type max-peak -populator lock -callers 1,64
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/intf"
)

func main() {
	server := flag.String("server", "rest", "rest or rpc")
	bin := flag.String("bin", "", "the server binary (go build ./server-rest or ./server-rpc)")
	typeName := flag.String("type", "max-peak", "max-peak or min-granularity")
	pop := flag.String("populator", "lock", "lock, sync, atomic or packed")
	callers := flag.String("callers", "1,64", "numbers of concurrent callers, comma-separated")
	batch := flag.Int("batch", 1000, "IDs per call")
	window := flag.Duration("window", 4*time.Second, "how long each case calls")
	flag.Parse()
	if err := run(*server, *bin, *typeName, *pop, *callers, *batch, *window); err != nil {
		fmt.Fprintln(os.Stderr, "satserve:", err)
		os.Exit(1)
	}
}

func run(server, bin, typeName, pop, callers string, batch int, window time.Duration) error {
	typ, err := intf.ParseIdType(typeName)
	if err != nil {
		return err
	}
	if bin == "" || (server != "rest" && server != "rpc") {
		return errors.New("-server rest|rpc and -bin are required")
	}
	srv, err := start(bin, server, typeName, pop)
	if err != nil {
		return err
	}
	defer srv.stop()
	take, closeFn, err := taker(server, srv.addr, batch)
	if err != nil {
		return err
	}
	defer closeFn()
	l, _ := typ.Layout()
	budget := float64(l.Seq.Max()+1) * float64(time.Second/l.Unit)
	for _, cs := range strings.Split(callers, ",") {
		n, err := strconv.Atoi(cs)
		if err != nil || n < 1 {
			return fmt.Errorf("callers: %q is not a positive number", cs)
		}
		r := measure(srv.pid, take, n, window)
		fmt.Printf("| %s | %s/%s | %d | %.1f%% | %.3f | %d | %s | %d |\n", server, typ, pop, n,
			100*float64(r.ids)/r.wall/budget, r.cpu/r.wall, r.errs, r.slowest.Round(time.Millisecond), r.dups)
	}
	return nil
}

type result struct {
	ids, errs, dups int
	wall, cpu       float64
	slowest         time.Duration
}

// measure runs callers goroutines calling take for window.
func measure(pid int, take func() ([]intf.Id, error), callers int, window time.Duration) result {
	got := make([][]intf.Id, callers)
	errs := make([]int, callers)
	slowest := make([]time.Duration, callers)
	var firstErr sync.Once
	deadline := time.Now().Add(window)
	c0, t0 := cpuSeconds(pid), time.Now()
	var wg sync.WaitGroup
	for w := range callers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				start := time.Now()
				ids, err := take()
				slowest[w] = max(slowest[w], time.Since(start))
				if err != nil {
					errs[w]++
					firstErr.Do(func() { fmt.Fprintln(os.Stderr, "satserve: first error:", err) })
					continue
				}
				got[w] = append(got[w], ids...)
			}
		})
	}
	wg.Wait()
	r := result{wall: time.Since(t0).Seconds(), cpu: cpuSeconds(pid) - c0}
	var all []intf.Id
	for w := range callers {
		all = append(all, got[w]...)
		r.errs += errs[w]
		r.slowest = max(r.slowest, slowest[w])
	}
	r.ids = len(all)
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			r.dups++
		}
	}
	return r
}

// taker returns a function that asks the server for one batch.
func taker(server, addr string, batch int) (func() ([]intf.Id, error), func(), error) {
	if server == "rpc" {
		c, err := client.New([]string{addr}, client.WithPoolSize(64), client.WithCallTimeout(10*time.Second))
		if err != nil {
			return nil, nil, err
		}
		return func() ([]intf.Id, error) { return c.GenIds(context.Background(), batch) }, func() { _ = c.Close() }, nil
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}, Timeout: 10 * time.Second}
	url := fmt.Sprintf("http://%s/genid?count=%d", addr, batch)
	return func() ([]intf.Id, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("status %s", resp.Status)
		}
		ids := make([]intf.Id, 0, batch)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			id, err := intf.ParseId(sc.Text())
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, sc.Err()
	}, hc.CloseIdleConnections, nil
}

type process struct {
	cmd  *exec.Cmd
	pid  int
	addr string
}

var listening = regexp.MustCompile(`vesta: listening.* addr=(\S+)`)

// start runs the server on a free loopback port and waits until it listens.
func start(bin, server, typeName, pop string) (*process, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command(bin, "--listen", addr, "--type", typeName, "--populator", pop, "--no-data-dir",
		"--max-batch", "100000", "--max-conns-per-ip", "1000") // the callers share one address
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case ready <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not listen within 30 s", bin)
	}
	return &process{cmd: cmd, pid: cmd.Process.Pid, addr: addr}, nil
}

func (p *process) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
	}
}

// cpuSeconds is the user + system CPU time of process pid.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTicks
}

// clockTicks is the kernel's USER_HZ, 100 on Linux.
const clockTicks = 100
