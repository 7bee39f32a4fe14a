package etcdlease_test

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/etcdlease"
)

// TestServerRestWithEtcd builds the real server-rest and runs it with
// provider etcd, configured by flags alone.
func TestServerRestWithEtcd(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(root, "server-rest", "main.go")); err != nil {
		t.Skip("./server-rest does not exist yet")
	}
	bin := filepath.Join(t.TempDir(), "server-rest")
	build := exec.Command("go", "build", "-o", bin, "./server-rest")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./server-rest: %s", out)

	listen := freeURL().Host
	keys := etcdlease.Keys{Prefix: prefixOf(t)}
	srv := exec.Command(bin, "--machine-provider", "etcd", "--etcd-endpoints", etcdEndpoint,
		"--etcd-prefix", keys.Prefix, "--etcd-lease-ttl", "2s", "--etcd-node-name", "rest-e2e",
		"--listen", listen, "--no-data-dir=true", "--log-level", "warn")
	srv.Stdout, srv.Stderr = io.Discard, &testWriter{t: t}
	require.NoError(t, srv.Start())
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		<-exited
	})

	var id int64
	eventually(t, 30*time.Second, "/genid answers 200", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("server-rest exited: %v", err)
		default:
		}
		resp, err := http.Get("http://" + listen + "/genid")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return false
		}
		id, err = strconv.ParseInt(string(body), 10, 64)
		return err == nil
	})
	c := etcdClient(t)
	owner, lease, held := get(t, c, keys.Machine(0))
	require.True(t, held, "server-rest holds machine 0 in etcd")
	assert.Equal(t, "rest-e2e", owner)
	assert.NotZero(t, lease, "the machine key is attached to a lease")
	assert.Equal(t, int64(0), machineOf(id))

	require.NoError(t, srv.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		assert.NoError(t, err, "a clean exit")
	case <-time.After(30 * time.Second):
		t.Fatal("server-rest did not stop on SIGTERM")
	}
	_, _, held = get(t, c, keys.Machine(0))
	assert.False(t, held, "a graceful stop releases the id")
	assert.GreaterOrEqual(t, markOf(t, c, keys, 0), intf.DefaultEpochMillis+timeUnit(id)*1000, "the mark covers the IDs issued")
}
