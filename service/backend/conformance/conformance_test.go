package conformance_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/internal/leasekit"
)

// A holder paused (a VM stall, a long GC) while an operator deletes its
// claim, and a new node that takes the id meanwhile: the new node starts
// above the holder's mark, which survives the claim, and the holder, once
// it runs again, stops within the verify interval. No ID twice.
func TestDeletedClaimOfAPausedHolder(t *testing.T) {
	stresstest.Only(t, "two real server-rest under load and a lease TTL waited out, on each coordinator (fast cover: TestLostClaimReclaimsItsOwnId, TestResumeStartsAboveTheCoordinatorsMark)")
	each(t, func(t *testing.T, c coordinator, prefix string) {
		common := append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "6s", "--machine-range", "5-5", "--no-data-dir=true")
		a := start(t, append(common, "--etcd-node-name", "a")...)
		require.Equal(t, int64(5), issuing(t, a, 30*time.Second))
		stop := make(chan struct{})
		fromA, issuedA := a.Load(stop)
		issues(t, "a", issuedA)
		a.Signal(t, syscall.SIGSTOP)
		c.deleteClaim(t, prefix, 5)
		b := start(t, append(common, "--etcd-node-name", "b")...)
		leasetest.Eventually(t, 30*time.Second, "b claims machine 5", func() bool {
			return strings.Contains(b.Logs(), "machine id held") || strings.Contains(b.Logs(), "waiting for the clock to near")
		})
		a.Signal(t, syscall.SIGCONT)
		resumed := time.Now()
		require.Equal(t, int64(5), issuing(t, b, 30*time.Second))
		fromB, issuedB := b.Load(stop)
		issues(t, "b", issuedB)
		leasetest.Eventually(t, 30*time.Second, "a stops issuing", func() bool {
			code, _ := a.Get("/genid")
			return code != http.StatusOK
		})
		close(stop)
		idsA, lastA := fromA()
		idsB, _ := fromB()
		n := noDuplicate(t, idsA, idsB)
		issuedFor := max(lastA.Sub(resumed), 0)
		t.Logf("%d IDs, none twice; a issued for %s after it ran again (verify interval %s)", n, issuedFor.Round(time.Millisecond), leasekit.VerifyInterval)
		assert.Less(t, issuedFor, 2*time.Second, "a holder whose claim is gone stops within about the verify interval, not at its next renewal")
	})
}

// A node killed under load while borrowing ahead of the clock, and its
// data dir's marks set an hour back (a restore from a backup, a copied
// volume), restarted at once: it resumes its claim above now + lead, not
// above the data dir's mark.
func TestRestoredDataDirResumesAboveTheCoordinatorsMark(t *testing.T) {
	stresstest.Only(t, "two real server-rest under load with a kill -9, on each coordinator (fast cover: TestResumeStartsAboveTheCoordinatorsMark)")
	each(t, func(t *testing.T, c coordinator, prefix string) {
		dir := t.TempDir()
		args := append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "6s", "--machine-range", "7-7", "--data-dir", dir, "--max-borrow", "2s")
		a := start(t, append(args, "--etcd-node-name", "a")...)
		issuing(t, a, 30*time.Second)
		stopA := make(chan struct{})
		fromA, issuedA := a.Load(stopA)
		leasetest.Eventually(t, 10*time.Second, "the claim saved in the data dir", func() bool {
			_, err := os.Stat(filepath.Join(dir, "lease.state"))
			return err == nil
		})
		issues(t, "a", issuedA)
		a.Signal(t, syscall.SIGKILL)
		close(stopA)
		old := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10) + "\n"
		for _, f := range []string{"highwater", "highwater.prev"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(old), 0o644))
		}
		b := start(t, append(args, "--etcd-node-name", "b")...)
		require.Equal(t, int64(7), issuing(t, b, 30*time.Second))
		stopB := make(chan struct{})
		fromB, issuedB := b.Load(stopB)
		issues(t, "b", issuedB)
		close(stopB)
		idsA, _ := fromA()
		idsB, _ := fromB()
		require.NotEmpty(t, idsA)
		require.NotEmpty(t, idsB)
		t.Logf("%d IDs, none twice", noDuplicate(t, idsA, idsB))
		b.Logged(t, "machine id resumed from the data dir") // the same claim, resumed
	})
}

// Nodes starting at once on one fleet hold distinct ids.
func TestConcurrentClaimsHoldDistinctIds(t *testing.T) {
	each(t, func(t *testing.T, c coordinator, prefix string) {
		var nodes []*leasetest.Rest
		for i := range 5 {
			nodes = append(nodes, start(t, append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "6s", "--machine-range", "10-14",
				"--no-data-dir=true", "--etcd-node-name", "n"+strconv.Itoa(i))...))
		}
		seen := map[int64]bool{}
		for _, n := range nodes {
			m := issuing(t, n, 30*time.Second)
			assert.False(t, seen[m], "machine %d held twice", m)
			seen[m] = true
		}
	})
}

// A node whose claim is deleted claims its own id again and waits out
// its own mark (its validity, up to a TTL ahead) rather than trade the id
// for another: nobody stored a mark since, so every ID above its claim's
// floor was its own.
func TestLostClaimReclaimsItsOwnId(t *testing.T) {
	each(t, func(t *testing.T, c coordinator, prefix string) {
		a := start(t, append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "15s", "--machine-range", "20-21",
			"--no-data-dir=true", "--etcd-node-name", "a", "--max-clock-backward-wait", "1s")...)
		m := issuing(t, a, 30*time.Second)
		stop := make(chan struct{})
		fromA, issuedA := a.Load(stop)
		issues(t, "a", issuedA)
		c.deleteClaim(t, prefix, m)
		leasetest.Eventually(t, 10*time.Second, "a loses its claim", func() bool {
			return strings.Contains(a.Logs(), "machine id lost")
		})
		again := time.Now()
		assert.Equal(t, m, issuing(t, a, 30*time.Second), "the same id, claimed again")
		t.Logf("issuing again %s after the loss", time.Since(again).Round(time.Millisecond))
		close(stop)
		ids, _ := fromA()
		noDuplicate(t, ids)
	})
}

// A node restarted while its coordinator is unreachable and its saved
// claim has run out waits for the coordinator instead of exiting, and
// resumes its id once it answers.
func TestRestartWhileTheCoordinatorIsDownWaits(t *testing.T) {
	each(t, func(t *testing.T, c coordinator, prefix string) {
		dir := t.TempDir()
		px := proxy(t, c)
		args := append(c.args(prefix, px.Addr()), "--etcd-lease-ttl", "2s", "--machine-range", "30-30", "--data-dir", dir)
		a := start(t, append(args, "--etcd-node-name", "a")...)
		issuing(t, a, 30*time.Second)
		leasetest.Eventually(t, 10*time.Second, "the claim saved in the data dir", func() bool {
			_, err := os.Stat(filepath.Join(dir, "lease.state"))
			return err == nil
		})
		a.Signal(t, syscall.SIGKILL)
		px.Cut()
		b := start(t, append(args, "--etcd-node-name", "b")...)
		time.Sleep(6 * time.Second)
		require.False(t, b.Exited(), "b waits for the coordinator:\n%s", b.Logs())
		code, _ := b.Get("/readyz")
		assert.Equal(t, http.StatusServiceUnavailable, code, "not ready while it holds no id")
		px.Restore()
		assert.Equal(t, int64(30), issuing(t, b, 30*time.Second))
	})
}

// A maxBorrow longer than a leased node may issue ahead of its clock is
// refused at start, naming both keys (a burst would otherwise borrow
// units the fence refuses: 503s while /readyz says ready).
func TestBorrowBeyondTheLeaseRefusedAtStart(t *testing.T) {
	each(t, func(t *testing.T, c coordinator, prefix string) {
		n := start(t, append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "6s", "--max-borrow", "30s", "--no-data-dir=true")...)
		select {
		case <-n.Done():
		case <-time.After(30 * time.Second):
			t.Fatal("server-rest started")
		}
		require.Error(t, n.Err())
		for _, key := range []string{"maxBorrow", "leaseTTL", "at most 2.84s"} {
			assert.Contains(t, n.Logs(), key)
		}
	})
}

// A node restarted while its coordinator does not answer, with time left
// on its saved claim, resumes offline and logs the time it truly has, from
// after its dial timeout: it stops (503) about when it said, not a dial
// timeout earlier.
func TestOfflineResumeStatesTheTimeLeft(t *testing.T) {
	stresstest.Only(t, "a real server-rest issuing out its offline validity, on each coordinator (fast cover: TestOfflineValidity)")
	each(t, func(t *testing.T, c coordinator, prefix string) {
		dir := t.TempDir()
		px := proxy(t, c)
		args := append(c.args(prefix, px.Addr()), "--etcd-lease-ttl", "12s", "--machine-range", "40-40", "--data-dir", dir, "--etcd-dial-timeout", "3s")
		a := start(t, append(args, "--etcd-node-name", "a")...)
		issuing(t, a, 30*time.Second)
		time.Sleep(4500 * time.Millisecond) // a renewal (every 4 s) and its mark saved
		a.Signal(t, syscall.SIGKILL)
		px.Freeze() // a silent coordinator: the restart's first request waits its whole dial timeout
		b := start(t, append(args, "--etcd-node-name", "b")...)
		require.Equal(t, int64(40), issuing(t, b, 30*time.Second))
		resumed := time.Now()
		line := ""
		leasetest.Eventually(t, 10*time.Second, "the offline resume logged", func() bool {
			for _, l := range strings.Split(b.Logs(), "\n") {
				if strings.Contains(l, "is unreachable; resuming the machine id on the") {
					line = l
				}
			}
			return line != ""
		})
		_, rest, _ := strings.Cut(line, "validFor=")
		said, err := time.ParseDuration(strings.Fields(rest)[0])
		require.NoError(t, err, line)
		leasetest.Eventually(t, 30*time.Second, "b stops issuing", func() bool {
			code, _ := b.Get("/genid")
			return code != http.StatusOK
		})
		issued := time.Since(resumed)
		t.Logf("logged validFor=%s, issued for %s", said, issued.Round(time.Millisecond))
		// It stops at the last whole unit (a second, max-peak) before the
		// time it logged.
		assert.InDelta(t, said.Seconds()-0.5, issued.Seconds(), 1, "the log says how long it will issue")
	})
}

// A holder cut off from its coordinator under load stops issuing before
// its claim can lapse, and the node that takes the id over once it has
// lapsed starts above every ID the holder issued: fencing and takeover.
func TestCutOffHolderIsFencedBeforeTheTakeover(t *testing.T) {
	stresstest.Only(t, "two real server-rest under load around a lease expiry, on each coordinator (fast cover: etcdlease's TestCutHolderIsFencedBeforeItsLeaseExpires, pglease's TestCutHolderIsFencedBeforeItsClaimLapsesAndRecovers)")
	each(t, func(t *testing.T, c coordinator, prefix string) {
		px := proxy(t, c)
		common := []string{"--etcd-lease-ttl", "3s", "--machine-range", "50-50", "--no-data-dir=true"}
		a := start(t, append(append(c.args(prefix, px.Addr()), common...), "--etcd-node-name", "a")...)
		require.Equal(t, int64(50), issuing(t, a, 30*time.Second))
		stopA := make(chan struct{})
		fromA, issuedA := a.Load(stopA)
		issues(t, "a", issuedA)
		px.Cut()
		// b refuses to start while a's claim is live: start it until the
		// claim has lapsed.
		var b *leasetest.Rest
		for deadline := time.Now().Add(30 * time.Second); b == nil; time.Sleep(200 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "b never took the id")
			n := start(t, append(append(c.args(prefix, c.addr()), common...), "--etcd-node-name", "b")...)
			leasetest.Eventually(t, 30*time.Second, "b issues or exits", func() bool {
				code, _ := n.Get("/genid")
				return code == http.StatusOK || n.Exited()
			})
			if !n.Exited() {
				b = n
			}
		}
		bFirst := time.Now()
		stopB := make(chan struct{})
		fromB, issuedB := b.Load(stopB)
		issues(t, "b", issuedB)
		close(stopA)
		close(stopB)
		idsA, lastA := fromA()
		idsB, _ := fromB()
		require.NotEmpty(t, idsA)
		require.NotEmpty(t, idsB)
		assert.True(t, lastA.Before(bFirst), "a stopped (last batch %s) before b issued (%s)", lastA.Format(time.RFC3339Nano), bFirst.Format(time.RFC3339Nano))
		t.Logf("%d IDs, none twice; a's last batch %s before b's first", noDuplicate(t, idsA, idsB), bFirst.Sub(lastA).Round(time.Millisecond))
	})
}

// A claim that finds its id was held but has no mark left (deleted by
// hand, restored from an old backup) starts above now + TTL + lead, the
// furthest its last holder may have issued, rather than at the clock:
// here the holder, paused while its marks were deleted and its claim
// ended, runs again and issues until it notices.
func TestLostMarkStartsAboveTheLongestLead(t *testing.T) {
	stresstest.Only(t, "two real server-rest under load and a lease TTL waited out, on each coordinator (fast cover: TestLostMarkFloor)")
	each(t, func(t *testing.T, c coordinator, prefix string) {
		common := append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "3s", "--machine-range", "60-60", "--no-data-dir=true")
		a := start(t, append(common, "--etcd-node-name", "a")...)
		require.Equal(t, int64(60), issuing(t, a, 30*time.Second))
		stop := make(chan struct{})
		fromA, issuedA := a.Load(stop)
		issues(t, "a", issuedA)
		a.Signal(t, syscall.SIGSTOP)
		c.deleteMark(t, prefix, 60)
		c.lapseClaim(t, prefix, 60)
		b := start(t, append(common, "--etcd-node-name", "b")...)
		leasetest.Eventually(t, 30*time.Second, "b claims the id and finds its mark lost", func() bool {
			return strings.Contains(b.Logs(), "has no mark left") || strings.Contains(b.Logs(), "machine id held")
		})
		a.Signal(t, syscall.SIGCONT)
		require.Equal(t, int64(60), issuing(t, b, 30*time.Second))
		fromB, issuedB := b.Load(stop)
		issues(t, "b", issuedB)
		close(stop)
		idsA, _ := fromA()
		idsB, _ := fromB()
		require.NotEmpty(t, idsB)
		t.Logf("%d IDs, none twice", noDuplicate(t, idsA, idsB))
	})
}

// Two nodes of one fleet whose epochs lie 8 s apart: had the second taken
// the id the first handed over, it would have issued the first's IDs of
// those 8 s again (measured before the layout record: 1,198,000
// duplicates, nothing logged). The second refuses to start, naming the
// fleet's record and both epochs.
func TestAnotherLayoutRefusedAtStart(t *testing.T) {
	each(t, func(t *testing.T, c coordinator, prefix string) {
		common := append(c.args(prefix, c.addr()), "--etcd-lease-ttl", "6s", "--machine-range", "70-70", "--no-data-dir=true")
		a := start(t, append(common, "--etcd-node-name", "a")...)
		require.Equal(t, int64(70), issuing(t, a, 30*time.Second))
		a.Stop(t) // the id handed over gracefully
		later := strconv.FormatInt(intf.DefaultEpochMillis+8000, 10)
		b := start(t, append(common, "--etcd-node-name", "b", "--epoch", later)...)
		leasetest.Eventually(t, 30*time.Second, "b exits or issues", func() bool {
			code, _ := b.Get("/genid")
			return b.Exited() || code == http.StatusOK
		})
		require.True(t, b.Exited(), "b issues IDs with an epoch 8 s after its fleet's")
		var exit *exec.ExitError
		require.ErrorAs(t, b.Err(), &exit)
		assert.NotZero(t, exit.ExitCode())
		assert.Contains(t, b.Logs(), "the fleet under prefix "+prefix+" has epoch 2014-12-31T16:00:00Z ("+c.layoutWhere(prefix)+"), this node epoch 2014-12-31T16:00:08Z")
	})
}
