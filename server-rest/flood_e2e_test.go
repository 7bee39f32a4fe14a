package main

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/internal/tlstest"
)

// A flood of idle connections from many addresses, each under
// maxConnsPerIP, on a server that may open 512 files: the port holds at
// most what fits beside the service's own files, evicting the longest idle,
// so a legitimate client keeps being served, the mark keeps being stored
// and a token added to the auth file during the flood works (on the
// previous main: "too many open files", the mark not stored, reloads
// failing).
// Fast cover: internal/connlimit (the caps and whom they evict) and
// internal/server/app.TestFitConns (the caps under the file limit).
func TestConnectionFloodThroughTheBinary(t *testing.T) {
	stresstest.Only(t, "1,200 connections flooding a real server-rest until it has closed 800 (both cores busy)")
	t.Parallel()
	const files = 512
	const tokApp, tokNew = "vesta_flood-app-token", "vesta_flood-new-token"
	auth := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(authFile(client("app", tokApp, "genid"))), 0o600))
	p := startFiles(t, files, "--listen", "127.0.0.1:0", "--machine", "36", "--data-dir", t.TempDir(),
		"--auth-file", auth, "--reload-interval", "0")
	base := p.waitReady(t)
	assert.Contains(t, p.logText(), `msg="vesta: file descriptors" limit=512 reservedForTheService=128 maxConns=384`)

	flood := nettest.StartFlood(strings.TrimPrefix(base, "http://"), 20, 60) // 1,200 connections, 60 per address
	t.Cleanup(func() { flood.Stop() })

	app := &http.Client{Timeout: 3 * time.Second}
	get := func(tok string) (int, time.Duration) {
		req, err := http.NewRequest(http.MethodGet, base+"/genid?count=10", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		began := time.Now()
		resp, err := app.Do(req)
		took := time.Since(began)
		if err != nil {
			return 0, took
		}
		resp.Body.Close()
		return resp.StatusCode, took
	}
	// The flood goes on until the server has closed many connections over
	// its cap and the client has made its calls, however long a busy
	// machine takes; the token is added once the server is over its cap.
	// The guards only end a server that stopped answering.
	const minCalls = 100
	var took []time.Duration
	ok, failed := 0, 0
	reloaded := false
	for guard := time.Now().Add(3 * time.Minute); ok+failed < minCalls || flood.Stats().Closed <= 800; {
		require.True(t, time.Now().Before(guard), "after 3 minutes: %d calls; flood: %s", ok+failed, flood.Stats())
		code, d := get(tokApp)
		took = append(took, d)
		if code == http.StatusOK {
			ok++
		} else {
			failed++
		}
		if !reloaded && flood.Stats().Closed > 100 { // the flood is over the cap: a token is added
			tlstest.WriteFile(t, auth, []byte(authFile(client("app", tokApp, "genid"), client("new", tokNew, "genid"))))
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
			reloaded = true
		}
	}
	require.True(t, reloaded)
	newOK := false
	for guard := time.Now().Add(time.Minute); time.Now().Before(guard); {
		if code, _ := get(tokNew); code == http.StatusOK {
			newOK = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := flood.Stop()
	slices.Sort(took)
	p99 := took[len(took)*99/100]
	t.Logf("flood: %s; the legitimate client: %d of %d calls answered 200 (%.2f%%), p50 %s, p99 %s",
		st, ok, ok+failed, 100*float64(ok)/float64(ok+failed), took[len(took)/2], p99)
	assert.Greater(t, st.Closed, int64(800), "the server closed the connections over its cap")
	assert.GreaterOrEqual(t, float64(ok)/float64(ok+failed), 0.99)
	assert.True(t, newOK, "the token added during the flood works: the auth file was read")
	log := p.logText()
	assert.NotContains(t, log, "too many open files")
	assert.NotContains(t, log, "cannot store")
	p.stop(t)
}
