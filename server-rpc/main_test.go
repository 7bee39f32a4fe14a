package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/internal/pluginwire"
)

func TestPluginMode(t *testing.T) {
	t.Setenv(pluginwire.Handshake.MagicCookieKey, "")
	for args, want := range map[string]bool{
		"":                     false,
		"--plugin":             true,
		"--plugin=true":        true,
		"--plugin=false":       false,
		"-p --machine 3":       false,
		"--machine 3 --plugin": true,
		"-- --plugin":          false,
	} {
		assert.Equal(t, want, pluginMode(splitArgs(args)), args)
	}
	t.Setenv(pluginwire.Handshake.MagicCookieKey, pluginwire.Handshake.MagicCookieValue)
	assert.True(t, pluginMode(nil), "a go-plugin host set the cookie")
}

func splitArgs(s string) []string { return regexp.MustCompile(`\S+`).FindAllString(s, -1) }

func TestProgramDefaults(t *testing.T) {
	var f flags
	assert.Equal(t, int64(intf.GenMethodCentral), program(&f, false).Defaults.GenMethod)
	assert.Equal(t, ":20880", program(&f, false).Defaults.Listen)
	assert.Equal(t, int64(intf.GenMethodEmbedded), program(&f, true).Defaults.GenMethod)
}

// The TCP server's settings are configuration keys (groups server and
// rpc): a value out of range is refused at start, naming the flag and the
// key.
func TestFlagsCheck(t *testing.T) {
	setup := func(args ...string) error {
		var f flags
		p := program(&f, false)
		p.Stdout, p.Stderr = io.Discard, io.Discard
		_, _, err := p.Setup(append([]string{"--data-dir", t.TempDir()}, args...))
		return err
	}
	require.NoError(t, setup("--max-conns", "1", "--max-conns-per-ip", "1", "--max-message-bytes", "1024",
		"--first-byte-timeout", "1ms", "--idle-timeout", "1ms", "--message-timeout", "1ms", "--write-timeout", "1ms",
		"--shutdown-timeout", "1s"))
	for flag, bad := range map[string]struct{ key, value string }{
		"--max-conns":          {"maxConns", "-1"},
		"--max-conns-per-ip":   {"maxConnsPerIP", "0"},
		"--max-message-bytes":  {"maxMessageBytes", "1023"},
		"--first-byte-timeout": {"firstByteTimeout", "0s"},
		"--idle-timeout":       {"idleTimeout", "-1ns"},
		"--message-timeout":    {"messageTimeout", "0s"},
		"--write-timeout":      {"writeTimeout", "0s"},
		"--shutdown-timeout":   {"shutdownTimeout", "0s"},
	} {
		err := setup(flag, bad.value)
		require.Error(t, err, flag)
		assert.Contains(t, err.Error(), "from flag "+flag+":")
		assert.Contains(t, err.Error(), "config key "+bad.key+":")
	}
}

func TestServerBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	bin := rpctest.BuildServerRPC(t)
	// Each subtest runs its own server processes (own port, data dir and
	// log) and waits on them: they run at the same time, started from
	// goroutines so that -parallel does not queue them.
	var wg sync.WaitGroup
	for name, f := range map[string]func(*testing.T, string){
		"serves and stops on SIGTERM": testServe,
		"bad flags":                   testBadFlags,
		"idle and slow connections from another address": testIdleAndSlowFlood,
		"idle flood over max-conns evicts":               testIdleFloodEvicts,
		"8 GB message header":                            testHugeHeader,
	} {
		wg.Go(func() { t.Run(name, func(t *testing.T) { f(t, bin) }) })
	}
	wg.Wait()
}

// testServe starts the real binary on a free port, uses it through the
// client and stops it with SIGTERM.
func testServe(t *testing.T, bin string) {
	dataDir := t.TempDir()
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--machine", "9", "--max-batch", "50",
		"--segment-tags", "order")
	cmd.Env = append(os.Environ(), "VESTA_LOG_LEVEL=debug")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	addr := make(chan string, 1)
	logs := make(chan string, 1000)
	go func() {
		re := regexp.MustCompile(`vesta: listening.* server=rpc addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
			select {
			case logs <- sc.Text():
			default:
			}
		}
		close(logs)
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not say where it listens")
	}

	c, err := client.New([]string{a})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := c.GenId(ctx)
	require.NoError(t, err)
	fields, err := c.ExpId(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, intf.IdFields{Machine: 9, GenMethod: intf.GenMethodCentral, Seq: fields.Seq, Time: fields.Time}, fields)
	_, err = c.GenIds(ctx, 51)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument, "--max-batch caps batches")
	seg, err := c.NextIds(ctx, "order", 50)
	require.NoError(t, err)
	assert.Equal(t, int64(1), seg[0], "segment mode on the SQLite file in the data dir")
	assert.Equal(t, int64(50), seg[49])
	_, err = c.NextIds(ctx, "order", 51)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument, "--max-batch caps segment batches")
	_, err = c.NextIds(ctx, "coupon", 1)
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
	require.NoError(t, c.Close())

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	var all []string
	for l := range logs {
		all = append(all, l)
	}
	require.NoError(t, cmd.Wait(), "exit 0")
	_, err = os.Stat(filepath.Join(dataDir, "highwater"))
	assert.NoError(t, err)
	assert.Contains(t, joined(all), "connection open")
	assert.Contains(t, joined(all), "segment mode on")
	assert.FileExists(t, filepath.Join(dataDir, "segments.db"))
	assert.Contains(t, joined(all), `msg="vesta: stopped" server=rpc`)
	assert.Contains(t, joined(all), `msg="vesta: shutting down: finishing the calls in flight" server=rpc timeout=15s`,
		"shutdownTimeout's default, server-rest's too")
	// The life of a server in the words server-rest uses too, in order:
	// "listening" once the IDs are served.
	assert.Equal(t, []string{"vesta: segment mode on", "vesta: id service ready", "vesta: listening",
		"vesta: shutting down: finishing the calls in flight", "vesta: stopped"}, lifeLines(all))
}

// lifeLines are the messages of the lines that tell a server's life, in
// order.
func lifeLines(lines []string) []string {
	msg := regexp.MustCompile(`msg="(vesta: (segment mode on|id service ready|listening|shutting down[^"]*|stopped))"`)
	var got []string
	for _, l := range lines {
		if m := msg.FindStringSubmatch(l); m != nil {
			got = append(got, m[1])
		}
	}
	return got
}

func joined(lines []string) string {
	s := ""
	for _, l := range lines {
		s += l + "\n"
	}
	return s
}

func testBadFlags(t *testing.T, bin string) {
	// A bad value of a key (maxConns, as every key) is a configuration
	// error: exit code 2, as server-rest's (docs/configuration.md).
	cmd := exec.Command(bin, "--max-conns", "-1", "--data-dir", t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, stderr.String(), `config key maxConns: "-1" from flag --max-conns`)

	// --plugin by hand: refused before the data dir is touched.
	dir := filepath.Join(t.TempDir(), "never")
	cmd = exec.Command(bin, "--plugin", "--data-dir", dir)
	cmd.Env = append(os.Environ(), pluginwire.Handshake.MagicCookieKey+"=")
	cmd.Stderr = io.Discard
	require.ErrorAs(t, cmd.Run(), &ee)
	assert.Equal(t, 1, ee.ExitCode())
	assert.NoDirExists(t, dir)

	// A TCP server flag with --plugin would be ignored: refused, named,
	// also when a go-plugin host started the process.
	// So are the TCP server's TLS, tokens and quotas: go-plugin's own
	// mutual TLS admits only the host.
	for _, args := range [][]string{{"--plugin", "--listen", "127.0.0.1:0"}, {"--plugin", "--idle-timeout", "1s"},
		{"--plugin", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"}, {"--plugin", "--auth-file", "/nonexistent/auth.yaml"},
		{"--plugin", "--rate-limit", "5"}} {
		var stderr strings.Builder
		cmd = exec.Command(bin, append(args, "--data-dir", dir)...)
		cmd.Env = append(os.Environ(), pluginwire.Handshake.MagicCookieKey+"="+pluginwire.Handshake.MagicCookieValue)
		cmd.Stderr = &stderr
		require.ErrorAs(t, cmd.Run(), &ee, args)
		assert.Equal(t, 1, ee.ExitCode(), args)
		assert.Contains(t, stderr.String(), args[1]+" is for the TCP server", args)
		key := map[string]string{"--listen": "listen", "--idle-timeout": "idleTimeout", "--tls-cert": "tlsCert",
			"--auth-file": "authFile", "--rate-limit": "rateLimit"}[args[1]]
		assert.Contains(t, stderr.String(), "(key "+key+")", args)
		assert.NoDirExists(t, dir)
	}

	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "server-rpc ")
}
