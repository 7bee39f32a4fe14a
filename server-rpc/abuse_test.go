package main

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/testbin"
)

// The hostile connections come from 127.0.0.2 and 127.0.0.3, the client
// from 127.0.0.1: Linux routes all of 127/8 to loopback.
var (
	idleFrom = &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}
	slowFrom = &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}
)

// binary is a running server-rpc.
type binary struct {
	addr string
	proc *os.Process
	stop func() string // SIGTERM, wants exit 0, returns the log
}

// startBinary starts the server-rpc binary on a free port; the test's
// cleanup stops it if the test did not.
func startBinary(t *testing.T, bin string, args ...string) binary {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, args...)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	addr := make(chan string, 1)
	logDone := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`vesta: listening.* server=rpc addr=(\S+)`)
		var all strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
			all.WriteString(sc.Text() + "\n")
		}
		logDone <- all.String()
	}()
	var log string
	stopped := false
	stop := func() string {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
			log = <-logDone
			assert.NoError(t, cmd.Wait(), "exit 0; log:\n%s", log)
		}
		return log
	}
	t.Cleanup(func() { stop() })
	select {
	case a := <-addr:
		return binary{addr: a, proc: cmd.Process, stop: stop}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the server did not say where it listens")
		return binary{}
	}
}

// total is a counter from the server's "connection totals" log line.
func total(t *testing.T, log, name string) int {
	t.Helper()
	m := regexp.MustCompile(`connection totals.* ` + name + `=(\d+)`).FindStringSubmatch(log)
	require.NotNil(t, m, "no %s in the totals:\n%s", name, log)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// openConns opens n connections from `from`; each sends `send` and then
// nothing more. The test's cleanup closes them.
func openConns(t *testing.T, addr string, from *net.TCPAddr, n int, send []byte) {
	t.Helper()
	d := net.Dialer{LocalAddr: from, Timeout: 10 * time.Second}
	for range n {
		c, err := d.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		if len(send) > 0 {
			_, _ = c.Write(send) // a refused connection may be reset already
		}
	}
}

// genIds makes n GenId calls through the client from 127.0.0.1 and wants
// every one to succeed.
func genIds(t *testing.T, addr string, n int) {
	t.Helper()
	c, err := client.New([]string{addr})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range n {
		_, err := c.GenId(ctx)
		require.NoError(t, err, "call %d", i)
	}
}

// Idle connections over the limit must not shut legitimate clients out:
// one address holds at most --max-conns-per-ip of them.
func testIdleAndSlowFlood(t *testing.T, bin string) {
	srv := startBinary(t, bin, "--max-conns", "200")
	openConns(t, srv.addr, idleFrom, 300, nil)
	openConns(t, srv.addr, slowFrom, 100, []byte{0x10, 0}) // 1 byte of a 16-byte message
	genIds(t, srv.addr, 50)
	log := srv.stop()
	assert.Equal(t, 300-64+100-64, total(t, log, "refusedPerIP"), "64 a remote address (the default)")
	assert.Zero(t, total(t, log, "refusedFull"))
}

// With no per-address limit to help, a newcomer to a full server evicts
// the longest-idle connection.
func testIdleFloodEvicts(t *testing.T, bin string) {
	srv := startBinary(t, bin, "--max-conns", "100", "--max-conns-per-ip", "1000")
	openConns(t, srv.addr, idleFrom, 300, nil)
	genIds(t, srv.addr, 50)
	log := srv.stop()
	assert.GreaterOrEqual(t, total(t, log, "evicted"), 201, "200 by the flood, 1 or more by the client")
	assert.Zero(t, total(t, log, "refusedFull"))
}

// A header claiming ~8 GB, then zeros, must not grow the server (gob
// accepts 8 GB): the connection is closed after the header.
func testHugeHeader(t *testing.T, bin string) {
	srv := startBinary(t, bin)
	genIds(t, srv.addr, 1) // warm: the service and the client's first allocations
	before := testbin.RSS(t, srv.proc.Pid)

	c, err := (&net.Dialer{LocalAddr: idleFrom}).Dial("tcp", srv.addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	_, err = c.Write([]byte{0xfb, 0x01, 0xff, 0xff, 0xff, 0xfe}) // 8 GiB - 2
	require.NoError(t, err)
	const tries = 256 << 20
	zeros := make([]byte, 1<<20)
	sent := 0
	for ; sent < tries && err == nil; sent += len(zeros) {
		_, err = c.Write(zeros)
	}
	require.Error(t, err, "the server closed the connection before %d bytes", tries)
	require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "closed, not stalled: %v", err)

	after := testbin.RSS(t, srv.proc.Pid)
	t.Logf("server RSS %d MiB before, %d MiB after; %d MiB sent before the close", before>>20, after>>20, sent>>20)
	assert.Less(t, after, before+32<<20, "the message was not buffered")
	genIds(t, srv.addr, 10)
	assert.Equal(t, 1, total(t, srv.stop(), "tooBig"))
}
