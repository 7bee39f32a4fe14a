package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/service/backend/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// rpcServer is a server-rpc process.
type rpcServer struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

func startServer(t *testing.T, bin, dsn string, machine int) *rpcServer {
	t.Helper()
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--machine", fmt.Sprint(machine),
		"--segment-store", "postgres", "--segment-tags", "e2e:1:100", "--segment-max-range", "5000")
	cmd.Env = append(os.Environ(), "VESTA_SEGMENT_DSN="+dsn) // never a DSN in a flag
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &rpcServer{cmd: cmd, done: make(chan struct{})}
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-s.done })
	addr := make(chan string, 1)
	go func() {
		defer close(s.done)
		re := regexp.MustCompile(`vesta: listening.* server=rpc addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case s.addr = <-addr:
	case <-time.After(60 * time.Second):
		t.Fatal("server-rpc did not say where it listens")
	}
	return s
}

// Four client processes take segment IDs from local ranges of two
// server-rpc processes sharing one PostgreSQL, under load; one server is
// killed with SIGKILL midway and the clients' range loads fail over to the
// other. No ID is handed out twice, across all four processes, and each
// caller's IDs increase.
//
// Stress only: a plain run covers client ranges and their failover in
// process, by client's TestSegmentRangesUnique and
// TestSegmentRangesFailOverAndDry.
func TestClientRangesAcrossProcessesAndAKill(t *testing.T) {
	stresstest.Only(t, "four segload and two server-rpc processes on PostgreSQL, one killed")
	if testing.Short() {
		t.Skip("builds and runs server-rpc and segload processes")
	}
	pg := pgtest.Shared(t)
	dsn, err := pg.NewDatabase(context.Background())
	require.NoError(t, err)
	server := rpctest.BuildServerRPC(t)
	segload := testbin.Must(t, "github.com/vesta-go/vesta/scripts/segload")
	s1 := startServer(t, server, dsn, 1)
	s2 := startServer(t, server, dsn, 2)

	dir := t.TempDir()
	type run struct {
		out   string
		res   result
		err   error
		logs  strings.Builder
		stdin io.WriteCloser // closing it ends the run (--until-eof)
	}
	runs := make([]*run, 4)
	var wg sync.WaitGroup
	t.Cleanup(func() { // on a failure too: the clients stop before their files go
		for _, r := range runs {
			if r != nil && r.stdin != nil {
				r.stdin.Close()
			}
		}
		wg.Wait()
	})
	for i := range runs {
		r := &run{out: filepath.Join(dir, fmt.Sprintf("ids-%d", i))}
		runs[i] = r
		addrs := s1.addr + "," + s2.addr
		if i%2 == 1 {
			addrs = s2.addr + "," + s1.addr
		}
		// Small ranges (at most 2,000 IDs): many loads, before and after
		// the kill. The run lasts until the test closes stdin; the
		// duration is only a guard.
		cmd := exec.Command(segload, "--addrs", addrs, "--tag", "e2e", "--ranges", "--max-range", "2000",
			"--duration", "10m", "--until-eof", "--goroutines", "8", "--rate", "5000", "--out", r.out)
		cmd.Stderr = &r.logs
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		r.stdin = stdin
		wg.Go(func() {
			out, err := cmd.Output()
			r.err = err
			if err == nil {
				r.err = json.Unmarshal(out, &r.res)
			}
		})
	}
	// A client's file grows a MiB (131,072 IDs) at a time: its first MiB
	// says it is taking IDs from its ranges.
	written := func(r *run) int64 {
		fi, err := os.Stat(r.out)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	const mib = 1 << 20
	waitWritten(t, "every client is taking IDs", func() bool {
		return !slices.ContainsFunc(runs, func(r *run) bool { return written(r) == 0 })
	})
	require.NoError(t, s1.cmd.Process.Kill())
	<-s1.done
	t.Log("server 1 killed")
	// 2 MiB more than at the kill: at least a MiB of IDs taken after it,
	// far more than the few ranges of at most 2,000 IDs a client held then,
	// so its range loads went on from server 2.
	atKill := make([]int64, len(runs))
	for i, r := range runs {
		atKill[i] = written(r)
	}
	waitWritten(t, "every client took IDs after the kill", func() bool {
		for i, r := range runs {
			if written(r) < atKill[i]+2*mib {
				return false
			}
		}
		return true
	})
	for _, r := range runs {
		require.NoError(t, r.stdin.Close())
	}
	wg.Wait()

	seen := map[int64]int{}
	total := 0
	for i, r := range runs {
		require.NoError(t, r.err, "client %d: %s", i, r.logs.String())
		assert.Zero(t, r.res.NotIncreasing, "client %d: every caller's IDs increase", i)
		ids := readIds(t, r.out)
		require.EqualValues(t, r.res.Ids, len(ids), "client %d wrote every ID it took", i)
		require.NotEmpty(t, ids, "client %d took IDs", i)
		for _, id := range ids {
			if prev, dup := seen[id]; dup {
				t.Fatalf("ID %d handed out twice: to client %d and client %d", id, prev, i)
			}
			seen[id] = i
		}
		total += len(ids)
		t.Logf("client %d: %d IDs, per second %v, waited %d times, %d failed calls %s", i, len(ids), r.res.PerSecond,
			r.res.Waits, r.res.Errors, r.res.FirstError)
	}
	t.Logf("%d IDs from 4 client processes, 0 duplicates", total)
}

// waitWritten waits until cond holds; the guard only ends a run whose
// clients stopped taking IDs.
func waitWritten(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for guard := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		require.True(t, time.Now().Before(guard), "after 2 minutes: not yet: %s", what)
	}
}

func readIds(t *testing.T, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Zero(t, len(b)%8)
	ids := make([]int64, len(b)/8)
	for i := range ids {
		ids[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return ids
}
