package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/pgtest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/service/rpcserver/rpctest"
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
		out  string
		res  result
		err  error
		logs strings.Builder
	}
	runs := make([]*run, 4)
	var wg sync.WaitGroup
	for i := range runs {
		r := &run{out: filepath.Join(dir, fmt.Sprintf("ids-%d", i))}
		runs[i] = r
		addrs := s1.addr + "," + s2.addr
		if i%2 == 1 {
			addrs = s2.addr + "," + s1.addr
		}
		// Small ranges (at most 2,000 IDs): many loads, before and after
		// the kill.
		cmd := exec.Command(segload, "--addrs", addrs, "--tag", "e2e", "--ranges", "--max-range", "2000",
			"--duration", "6s", "--goroutines", "8", "--rate", "5000", "--out", r.out)
		cmd.Stderr = &r.logs
		wg.Go(func() {
			out, err := cmd.Output()
			r.err = err
			if err == nil {
				r.err = json.Unmarshal(out, &r.res)
			}
		})
	}
	time.Sleep(2 * time.Second) // the clients are loading ranges from both servers
	require.NoError(t, s1.cmd.Process.Kill())
	<-s1.done
	t.Log("server 1 killed")
	wg.Wait()

	seen := map[int64]int{}
	total := 0
	for i, r := range runs {
		require.NoError(t, r.err, "client %d: %s", i, r.logs.String())
		assert.Zero(t, r.res.NotIncreasing, "client %d: every caller's IDs increase", i)
		ids := readIds(t, r.out)
		require.EqualValues(t, r.res.Ids, len(ids), "client %d wrote every ID it took", i)
		require.NotEmpty(t, ids, "client %d took IDs", i)
		require.Greater(t, len(r.res.PerSecond), 4)
		assert.Positive(t, r.res.PerSecond[4], "client %d took IDs after the kill", i)
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
