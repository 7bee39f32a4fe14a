package rpcplugin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// The slow tests here wait on processes (a build, a plugin's start, a
// stand-in's end) rather than on the CPU: they run in parallel.

func TestPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds server-rpc")
	}
	t.Parallel()
	bin := rpctest.BuildServerRPC(t)
	dataDir := t.TempDir()
	var logs syncbuf.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	machine := int64(0)
	// A period tag in the plugin's segment store, as vesta-segment
	// create-tag --group day would make it.
	st, err := sqlitestore.Open(ctx, filepath.Join(dataDir, sqlitestore.FileName))
	require.NoError(t, err)
	require.NoError(t, st.Init(ctx))
	require.NoError(t, st.CreatePeriodTag(ctx, segstore.PeriodTag{Tag: "invoice", Group: segstore.GroupDay, Format: "INV{yyyyMMdd}-{seq:4}", Step: 10}))
	require.NoError(t, st.Close())
	p, err := Launch(ctx, bin, Config{Machine: &machine, DataDir: dataDir, LogOutput: &logs,
		Env: []string{"VESTA_MAX_BATCH=100"}, Args: []string{"--segment-tags", "order"}})
	require.NoError(t, err)
	defer p.Close()

	id, err := p.GenId(ctx)
	require.NoError(t, err)
	fields, err := p.ExpId(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, int64(0), fields.Machine)
	assert.Equal(t, int64(intf.GenMethodEmbedded), fields.GenMethod, "a plugin is embedded by default")

	ids, err := p.GenIds(ctx, 100)
	require.NoError(t, err)
	assert.Len(t, ids, 100)
	assert.Less(t, id, ids[0])
	_, err = p.GenIds(ctx, 101)
	var fe *intf.FieldError
	require.ErrorAs(t, err, &fe, "the plugin's maxBatch (from the environment) holds")
	assert.Equal(t, int64(100), fe.Max)

	made, err := p.MakeId(ctx, intf.FromFields(intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2}))
	require.NoError(t, err)
	assert.Equal(t, intf.Id(2705126582500361294), made)
	_, err = p.TransTime(ctx, 1, intf.MinGranularity)
	require.NoError(t, err)

	seg, err := p.NextIds(ctx, "order", 3)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3}, seg, "segment mode, on the SQLite file in the plugin's data dir")
	_, err = p.NextIds(ctx, "coupon", 1)
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
	num, err := p.NextNumber(ctx, "invoice")
	require.NoError(t, err)
	assert.Equal(t, int64(1), num.Seq)
	assert.Equal(t, "INV"+num.Period+"-0001", num.Text, "a period tag's number, formatted by the plugin")
	_, err = p.NextNumber(ctx, "coupon")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)

	require.NoError(t, p.Close())
	_, err = p.GenId(ctx)
	assert.ErrorIs(t, err, intf.ErrClosed)
	_, err = p.NextIds(ctx, "order", 1)
	assert.ErrorIs(t, err, intf.ErrClosed)
	assert.True(t, p.Exited())
	_, err = os.Stat(filepath.Join(dataDir, "highwater"))
	assert.NoError(t, err, "the plugin stored its high-water mark")
	assert.FileExists(t, filepath.Join(dataDir, "segments.db"))
	assert.Contains(t, logs.String(), "id service ready", "the plugin's logs reach the host")

	// A plugin that dies instead of exiting cleanly: Close says so.
	doomed, err := Launch(ctx, bin, Config{NoDataDir: true, LogOutput: &syncbuf.Buffer{}})
	require.NoError(t, err)
	require.NoError(t, doomed.cmd.Process.Kill())
	assert.ErrorContains(t, doomed.Close(), "did not exit cleanly")
}

func TestLaunchPluginFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Launch(ctx, filepath.Join(t.TempDir(), "missing"), Config{LogOutput: &syncbuf.Buffer{}})
	assert.Error(t, err)

	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	_, err = Launch(done, "/bin/sleep", Config{Args: []string{"10"}, LogOutput: &syncbuf.Buffer{}})
	assert.Error(t, err)
}

func TestPluginArgs(t *testing.T) {
	m := int64(7)
	assert.Equal(t, []string{"--plugin"}, Config{}.args())
	assert.Equal(t, []string{"--plugin", "--machine", "7", "--data-dir", "/d", "--no-data-dir=true", "--config", "c.yaml",
		"--log-level", "debug", "--type=1"},
		Config{Machine: &m, DataDir: "/d", NoDataDir: true, ConfigFile: "c.yaml", LogLevel: "debug", Args: []string{"--type=1"}}.args())
}

// pidScript writes a plugin stand-in that records its pid in pidFile and
// then waits without ever answering go-plugin's handshake. Call it before
// t.Parallel: a process that another test forks while the script is open
// for writing inherits that descriptor, and exec of the script then fails
// with "text file busy" (golang/go#22315); no parallel test runs while
// the sequential ones do.
func pidScript(t *testing.T) (script, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	script, pidFile = filepath.Join(dir, "plugin.sh"), filepath.Join(dir, "pid")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho $$ > "+pidFile+"\nexec sleep 30\n"), 0o755))
	return script, pidFile
}

// Not parallel: it swaps start, which parallel tests read.
func TestLaunchPluginWithADoneContextStartsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var starts atomic.Int32
		orig := start
		start = func(*goplugin.Client) (*rpcapi.Conn, error) {
			starts.Add(1)
			return nil, errors.New("test: no process started")
		}
		defer func() { start = orig }()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Launch(ctx, "/nonexistent/plugin", Config{LogOutput: &syncbuf.Buffer{}})
		require.ErrorIs(t, err, context.Canceled)
		synctest.Wait() // whatever Launch left running has run as far as it can
		assert.Zero(t, starts.Load(), "no process was started")
	})
}

func TestLaunchPluginCancelledDuringStartStopsTheProcess(t *testing.T) {
	script, pidFile := pidScript(t) // before t.Parallel: see pidScript
	t.Parallel()
	// The deadline is go-plugin's StartTimeout: the start it abandons
	// ends then, and only then can the process be stopped. The cancel
	// comes first, so Launch returns context.Canceled, not the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := Launch(ctx, script, Config{LogOutput: &syncbuf.Buffer{}})
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), time.Second, "LaunchPlugin returns when its context ends")

	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 2*time.Second, 10*time.Millisecond, "the stand-in started")
	assert.Eventually(t, func() bool { return syscall.Kill(pid, 0) == syscall.ESRCH }, 10*time.Second, 50*time.Millisecond,
		"the process started for an abandoned launch is killed")
}
