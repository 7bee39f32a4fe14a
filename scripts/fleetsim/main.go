// Command fleetsim simulates a fleet of machine-id leases against one
// etcd server that it starts in this process (service/backend/etcdtest, fsync
// on): for each fleet size N it starts N ID services at once, each with
// its own etcdlease.Lease on one shared etcd client and default settings,
// and prints how long until all hold distinct ids, the claim transactions
// per claim, the etcd writes (revision growth) per node per second in
// steady state, and what that makes per node per hour. Then it fills the
// id space and times the refusal of the 1,025th node.
//
//	go run ./scripts/fleetsim -n 64,256,1000 -steady 60s
//
// The goals (issue "A fleet that survives its coordinator"): all of
// 1,000 holding within 5 s, at most 3 transactions per claim on average,
// at most 0.1 writes per node per second.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
	"github.com/vesta-go/vesta/service/backend/etcdtest"
)

func main() {
	sizes := flag.String("n", "64,256,1000", "fleet sizes, comma-separated")
	steady := flag.Duration("steady", time.Minute, "steady-state window over which etcd writes are counted")
	full := flag.Bool("full", true, "after the largest fleet, fill all 1024 ids and time the refusal of one more node")
	flag.Parse()
	var ns []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > intf.MaxMachine+1 {
			fmt.Fprintf(os.Stderr, "fleetsim: -n %q: want sizes 1..1024\n", f)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	fmt.Printf("| nodes | all holding after | distinct ids | claim txns per claim | etcd writes per node per s | revisions per node per hour | CPU s (process) |\n|---|---|---|---|---|---|---|\n")
	for i, n := range ns {
		if err := run(n, *steady, *full && i == len(ns)-1); err != nil {
			fmt.Fprintln(os.Stderr, "fleetsim:", err)
			os.Exit(1)
		}
	}
}

// run simulates one fleet of n nodes on a fresh etcd.
func run(n int, steady time.Duration, fill bool) error {
	dir, err := os.MkdirTemp("", "fleetsim-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	e, err := etcdtest.Start(dir, func(c *embed.Config) { c.UnsafeNoFsync = false })
	if err != nil {
		return err
	}
	defer e.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Clients[0].Addr().String()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx := context.Background()
	cpu0 := cpuSeconds()

	leases := make([]*etcdlease.Lease, n)
	svcs := make([]*service.Service, n)
	errs := make([]error, n)
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { leases[i], svcs[i], errs[i] = startNode(ctx, cli, fmt.Sprintf("node-%d", i)) })
	}
	wg.Wait()
	took := time.Since(t0)
	defer func() {
		for _, s := range svcs {
			if s != nil {
				_ = s.Close()
			}
		}
	}()
	ids := map[int64]bool{}
	var claims, txns uint64
	for i := range n {
		if errs[i] != nil {
			return fmt.Errorf("node %d: %w", i, errs[i])
		}
		ids[svcs[i].Stats().Machine] = true
		st := leases[i].Stats()
		claims += st.Claims
		txns += st.ClaimTxns
	}
	r1, err := revision(ctx, cli)
	if err != nil {
		return err
	}
	time.Sleep(steady)
	r2, err := revision(ctx, cli)
	if err != nil {
		return err
	}
	wps := float64(r2-r1) / steady.Seconds() / float64(n)
	fmt.Printf("| %d | %.2f s | %d/%d | %.2f | %.3f | %.0f | %.1f |\n", n, took.Seconds(), len(ids), n,
		float64(txns)/float64(claims), wps, wps*3600, cpuSeconds()-cpu0)
	if fill {
		return fillAndRefuse(ctx, cli, n, svcs)
	}
	return nil
}

// fillAndRefuse starts nodes until every id is held, then one more, and
// prints how fast that one is refused.
func fillAndRefuse(ctx context.Context, cli *clientv3.Client, n int, svcs []*service.Service) error {
	var more []*service.Service
	defer func() {
		for _, s := range more {
			_ = s.Close()
		}
	}()
	for i := n; i <= intf.MaxMachine; i++ {
		_, s, err := startNode(ctx, cli, fmt.Sprintf("node-%d", i))
		if err != nil {
			return fmt.Errorf("filling: node %d: %w", i, err)
		}
		more = append(more, s)
	}
	t0 := time.Now()
	_, s, err := startNode(ctx, cli, "node-1025th")
	took := time.Since(t0)
	if err == nil {
		_ = s.Close()
		return errors.New("the 1,025th node got an id")
	}
	fmt.Printf("\nthe 1,025th node is refused after %.0f ms (errors.Is ErrAllTaken: %v): %v\n",
		float64(took.Microseconds())/1e3, errors.Is(err, etcdlease.ErrAllTaken), err)
	return nil
}

// startNode starts an ID service on a lease with default settings but the
// node's name, sharing cli.
func startNode(ctx context.Context, cli *clientv3.Client, name string) (*etcdlease.Lease, *service.Service, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l, err := etcdlease.NewWithClient(cli, etcdlease.Options{Common: etcdlease.Common{Prefix: "/fleetsim", NodeName: name, Logger: quiet}})
	if err != nil {
		return nil, nil, err
	}
	s, err := service.New(ctx, service.Settings{Lease: l, NoDataDir: true, Logger: quiet})
	return l, s, err
}

// revision is etcd's current revision: each write (a put, a transaction
// with puts) raises it by one.
func revision(ctx context.Context, cli *clientv3.Client) (int64, error) {
	resp, err := cli.Get(ctx, "/fleetsim/", clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// cpuSeconds is the CPU time this process used so far (user + system).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
