package conformance_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/lease"
)

// The coordinator forgets what it knew of an id while its holder runs: a
// node that then takes the id finds no trace of it, or a mark lowered,
// and must start above the furthest the holder may issue before it
// notices its claim is gone. No ID twice.

// The fleet wiped (etcd: every key under the prefix deleted; PostgreSQL:
// both tables dropped, the next node recreating them) under a running
// holder, and a node pinned to its id started at once.
func TestWipedFleetIsNoFloor(t *testing.T) {
	stresstest.Only(t, "two real server-rest under load, on each coordinator (fast cover: TestNoTraceFloor)")
	each(t, func(t *testing.T, c coordinator, prefix string) {
		takeoverAfter(t, c, prefix, 61, nil, func(takeover func()) { c.wipe(t, prefix); takeover() })
	})
}

// A dump of the fleet taken before the holder claimed its id (its mark
// then an earlier holder's), restored under the running holder.
func TestRestoredDumpIsNoFloor(t *testing.T) {
	stresstest.Only(t, "three real server-rest under load, on each coordinator (fast cover: TestNoTraceFloor)")
	each(t, func(t *testing.T, c coordinator, prefix string) {
		old := start(t, append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "6s", "--machine-range", "62-62", "--no-data-dir=true",
			"--etcd-node-name", "old")...)
		require.Equal(t, int64(62), issuing(t, old, 30*time.Second))
		old.Stop(t)
		var restore func(*testing.T, func())
		takeoverAfter(t, c, prefix, 62, func() { restore = c.snapshot(t, prefix) }, func(takeover func()) { restore(t, takeover) })
	})
}

// The marks set back by hand and the holder restarted (it resumes above
// now + lead: fine), then its claim deleted and the id taken.
func TestLoweredMarksThenDeletedClaim(t *testing.T) {
	stresstest.Only(t, "three real server-rest under load with a kill -9, on each coordinator (fast cover: TestNoTraceFloor)")
	each(t, func(t *testing.T, c coordinator, prefix string) {
		dir := t.TempDir()
		args := append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "6s", "--machine-range", "63-63")
		a := start(t, append(args, "--data-dir", dir, "--etcd-node-name", "a")...)
		require.Equal(t, int64(63), issuing(t, a, 30*time.Second))
		stop := make(chan struct{})
		fromA, issuedA := a.Load(stop)
		issues(t, "a", issuedA)
		c.setMarks(t, prefix, 63, 1)
		a.Signal(t, syscall.SIGKILL)
		a2 := start(t, append(args, "--data-dir", dir, "--etcd-node-name", "a")...)
		require.Equal(t, int64(63), issuing(t, a2, 30*time.Second))
		a2.Logged(t, "machine id resumed from the data dir")
		fromA2, issuedA2 := a2.Load(stop)
		issues(t, "a2", issuedA2)
		time.Sleep(time.Second) // a2 issues a while on the resumed claim
		c.deleteClaim(t, prefix, 63)
		fromB, wait := startTaker(t, c, prefix, args, 63, stop)
		stopped(t, a2)
		close(stop)
		idsA, _ := fromA()
		idsA2, _ := fromA2()
		idsB, _ := fromB()
		require.NotEmpty(t, idsB)
		t.Logf("%d IDs, none twice; b issued %s after its start", noDuplicate(t, idsA, idsA2, idsB), wait.Round(time.Millisecond))
	})
}

// A node's data dir and the coordinator restored from backups taken at
// the same moment, the node borrowing ahead of its clock until it was
// killed: the restart resumes the restored claim above now + lead.
func TestRestoredDataDirAndCoordinator(t *testing.T) {
	stresstest.Only(t, "two real server-rest under load with a kill -9, on each coordinator (fast cover: TestResumeStartsAboveNowPlusLead)")
	each(t, func(t *testing.T, c coordinator, prefix string) {
		dir := t.TempDir()
		args := append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "9s", "--machine-range", "64-64", "--data-dir", dir, "--max-borrow", "3s")
		a := start(t, append(args, "--etcd-node-name", "a")...)
		require.Equal(t, int64(64), issuing(t, a, 30*time.Second))
		stopA := make(chan struct{})
		fromA, issuedA := a.Load(stopA)
		issues(t, "a", issuedA)
		a.Logged(t, "machine id held")
		leasetest.Eventually(t, 10*time.Second, "the claim saved in the data dir", func() bool {
			_, err := os.Stat(filepath.Join(dir, "lease.state"))
			return err == nil
		})
		restoreDir := backupDir(t, dir)
		restore := c.snapshot(t, prefix)
		// Longer than the marks were stored ahead (the lease's validity,
		// up to the TTL): the backups' marks fall behind what a issues.
		time.Sleep(10 * time.Second)
		a.Signal(t, syscall.SIGKILL)
		close(stopA)
		restore(t, nil)
		restoreDir(t)
		started := time.Now()
		b := start(t, append(args, "--etcd-node-name", "a")...)
		require.Equal(t, int64(64), issuing(t, b, 30*time.Second))
		wait := time.Since(started)
		b.Logged(t, "machine id resumed from the data dir")
		stopB := make(chan struct{})
		fromB, issuedB := b.Load(stopB)
		issues(t, "b", issuedB)
		time.Sleep(2 * time.Second)
		close(stopB)
		idsA, _ := fromA()
		idsB, _ := fromB()
		require.NotEmpty(t, idsA)
		t.Logf("%d IDs, none twice; the restart issued %s after it began", noDuplicate(t, idsA, idsB), wait.Round(time.Millisecond))
	})
}

// takeoverAfter runs a holder of machine under load (before runs first,
// if not nil), has forget make the coordinator forget the id, starting a
// node pinned to it through takeover once it may, loads both until the
// holder stops, and checks that no ID was issued twice.
func takeoverAfter(t *testing.T, c coordinator, prefix string, machine int64, before func(), forget func(takeover func())) {
	args := append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "12s", "--machine-range", rangeOf(machine), "--no-data-dir=true")
	if before != nil {
		before()
	}
	a := start(t, append(args, "--etcd-node-name", "a")...)
	require.Equal(t, machine, issuing(t, a, 30*time.Second))
	stop := make(chan struct{})
	fromA, issuedA := a.Load(stop)
	issues(t, "a", issuedA)
	var b *leasetest.Rest
	var started time.Time
	forget(func() {
		started = time.Now()
		b = start(t, append(args, "--no-data-dir=true", "--etcd-node-name", "b")...)
	})
	require.NotNil(t, b, "forget started the taker")
	if reclaimedFirst(t, a, b) {
		// The holder, seeing its claim gone, claimed its id again before
		// b could: legitimate; its IDs before and after must not meet.
		close(stop)
		idsA, _ := fromA()
		t.Logf("%d IDs, none twice; the old holder reclaimed the id before b", noDuplicate(t, idsA))
		return
	}
	require.Equal(t, machine, issuing(t, b, 30*time.Second))
	wait := time.Since(started)
	fromB, issuedB := b.Load(stop)
	issues(t, "b", issuedB)
	stopped(t, a)
	close(stop)
	idsA, _ := fromA()
	idsB, _ := fromB()
	require.NotEmpty(t, idsB)
	t.Logf("%d IDs, none twice; b issued %s after its start", noDuplicate(t, idsA, idsB), wait.Round(time.Millisecond))
}

// reclaimedFirst waits until b issues or exits, and tells whether b gave
// up because a, having lost its claim to the forgetting, claimed its id
// again first (both race for the id the moment a coordinator forgets).
func reclaimedFirst(t *testing.T, a, b *leasetest.Rest) bool {
	t.Helper()
	leasetest.Eventually(t, 30*time.Second, "the taker issues or gives up", func() bool {
		code, _ := b.GenID()
		return code == http.StatusOK || b.Exited()
	})
	if !b.Exited() || !strings.Contains(b.Logs(), lease.ErrAllTaken.Error()) {
		return false
	}
	a.Logged(t, "machine id lost; claiming one again")
	leasetest.Eventually(t, 30*time.Second, "the holder issues on its reclaimed id", func() bool {
		code, _ := a.GenID()
		return code == http.StatusOK
	})
	time.Sleep(time.Second) // a issues a while on the reclaimed id
	return true
}

// startTaker starts b, a node without a data dir, to take machine once
// its claim is deleted, and returns its IDs and how long it took to issue.
// The old holder claims the id again as soon as it finds its row gone; when
// it wins that race b finds every id held and exits: the claim is deleted
// again and b started anew (at most three times).
func startTaker(t *testing.T, c coordinator, prefix string, args []string, machine int64, stop chan struct{}) (func() ([]int64, time.Time), time.Duration) {
	for attempt := 1; ; attempt++ {
		started := time.Now()
		b := start(t, append(args, "--no-data-dir=true", "--etcd-node-name", "b")...)
		var id int64
		leasetest.Eventually(t, 30*time.Second, "b issues or exits", func() bool {
			var code int
			code, id = b.GenID()
			return code == http.StatusOK || b.Exited()
		})
		if b.Exited() {
			require.Less(t, attempt, 3, "b never took the deleted claim:\n%s", b.Logs())
			require.Contains(t, b.Logs(), "held by live nodes", "b exits only when the old holder claimed the id again first")
			c.deleteClaim(t, prefix, machine)
			continue
		}
		require.Equal(t, machine, intf.Id(id).Fields().Machine)
		wait := time.Since(started)
		fromB, issuedB := b.Load(stop)
		issues(t, "b", issuedB)
		return fromB, wait
	}
}

// stopped waits until r no longer issues.
func stopped(t *testing.T, r *leasetest.Rest) {
	leasetest.Eventually(t, 30*time.Second, "the old holder stops issuing", func() bool {
		code, _ := r.Get("/genid")
		return code != http.StatusOK
	})
}

// backupDir copies the files of a data dir; restoring writes them back in
// place (the directory itself stays: a restore into the same path).
func backupDir(t *testing.T, dir string) func(t *testing.T) {
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".tmp") {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			files[e.Name()] = b
		}
	}
	return func(t *testing.T) {
		for name, b := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
		}
	}
}

func rangeOf(machine int64) string {
	return strconv.FormatInt(machine, 10) + "-" + strconv.FormatInt(machine, 10)
}
