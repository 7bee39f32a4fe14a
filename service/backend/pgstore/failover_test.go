package pgstore_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/pgstore"
	"github.com/vesta-go/vesta/service/backend/pgtest"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// waitReplayed waits until c's standby has replayed everything the
// primary has written so far.
func waitReplayed(t *testing.T, ctx context.Context, c *pgtest.Cluster) {
	t.Helper()
	primary, err := pgx.Connect(ctx, c.Primary.DSN("postgres"))
	require.NoError(t, err)
	defer primary.Close(ctx)
	var lsn string
	require.NoError(t, primary.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn))
	standby, err := pgx.Connect(ctx, c.Standby.DSN("postgres"))
	require.NoError(t, err)
	defer standby.Close(ctx)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var done bool
		require.NoError(t, standby.QueryRow(ctx, "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)", lsn).Scan(&done))
		if done {
			return
		}
		require.True(t, time.Now().Before(deadline), "the standby did not replay %s within 20 s", lsn)
		time.Sleep(10 * time.Millisecond)
	}
}

// The failover tests run two Generators, each on its own Store over the
// cluster's two-host DSN (as two server processes would), under load;
// stop the primary as a crash would (pg_ctl stop -m immediate), promote
// the standby, and keep the load on until both have issued IDs from the
// new primary.

const (
	failoverTag = "order"
	// Small ranges, so that the generators go to the database all the
	// time and the failover hits allocations in flight.
	failoverStep, failoverMaxStep = 100, 1000
	// idsPerPhase is how many IDs each generator issues before the stop
	// and after the recovery.
	idsPerPhase = 3000
)

// failover is what one run saw.
type failover struct {
	ids [2][]int64
	// errs are the calls that failed, by generator.
	errs [2][]error
	// afterStop is how many IDs each generator issued after the primary
	// was down (from its buffers, then from the new primary).
	afterStop [2]int
	// promote is how long pg_ctl promote took; recovered is the time from
	// the stop to the first range the new primary handed out; outage is
	// the longest run of failing calls of either generator.
	promote, recovered, outage time.Duration
	// maxId is the tag's max_id on the new primary at the end.
	maxId int64
}

// allocClock is a segstore.Store that notes when its first Alloc succeeds
// after mark.
type allocClock struct {
	segstore.Store
	mark  atomic.Int64 // unix nanos; 0 until set
	first atomic.Int64 // unix nanos of the first Alloc after mark
}

func (s *allocClock) Alloc(ctx context.Context, tag string, step int64) (int64, int64, error) {
	maxId, dbStep, err := s.Store.Alloc(ctx, tag, step)
	if err == nil && s.mark.Load() != 0 {
		s.first.CompareAndSwap(0, time.Now().UnixNano())
	}
	return maxId, dbStep, err
}

func runFailover(t *testing.T, c *pgtest.Cluster, o pgstore.Options) failover {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dsn := c.DSN("postgres")

	var stores [2]*allocClock
	var gens [2]*segment.Generator
	for i := range gens {
		st, err := pgstore.OpenOptions(ctx, dsn, o)
		require.NoError(t, err)
		require.NoError(t, st.Init(ctx))
		if i == 0 {
			require.NoError(t, st.CreateTag(ctx, segstore.TagInfo{Tag: failoverTag, MaxId: 1, Step: failoverStep}))
			// The tables and the tag must reach the standby before the
			// primary stops: an asynchronous one on a loaded machine may
			// lag that far, and the test is about ranges, not rows.
			waitReplayed(t, ctx, c)
		}
		stores[i] = &allocClock{Store: st}
		g, err := segment.New(ctx, segment.Settings{Store: stores[i], MaxStep: failoverMaxStep,
			LoadTimeout: 2 * time.Second, RetryInterval: 10 * time.Millisecond})
		require.NoError(t, err)
		gens[i] = g
		t.Cleanup(func() { _ = g.Close() })
	}

	var (
		r       failover
		mu      sync.Mutex // guards r.ids, r.errs, r.afterStop
		stopped atomic.Bool
		outage  [2]time.Duration
		done    = make(chan struct{})
		wg      sync.WaitGroup
	)
	for i, g := range gens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var failingSince time.Time
			for {
				select {
				case <-done:
					return
				default:
				}
				id, err := g.NextId(ctx, failoverTag)
				now := time.Now()
				mu.Lock()
				if err != nil {
					r.errs[i] = append(r.errs[i], err)
					if failingSince.IsZero() {
						failingSince = now
					}
				} else {
					r.ids[i] = append(r.ids[i], id)
					if stopped.Load() {
						r.afterStop[i]++
					}
					if !failingSince.IsZero() {
						outage[i] = max(outage[i], now.Sub(failingSince))
						failingSince = time.Time{}
					}
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(2 * time.Millisecond) // the retry is due every 10 ms
				}
			}
		}()
	}
	// waitFor polls until each generator has issued n IDs (counted by
	// count), or fails the test after the deadline.
	waitFor := func(what string, count func(i int) int, n int, within time.Duration) {
		deadline := time.Now().Add(within)
		for {
			mu.Lock()
			ok := count(0) >= n && count(1) >= n
			mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				close(done)
				wg.Wait()
				t.Fatalf("%s: not within %s (ids %d and %d; errors %v %v)\n%s", what, within,
					len(r.ids[0]), len(r.ids[1]), lastErr(r.errs[0]), lastErr(r.errs[1]), c.Logs())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("load before the failover", func(i int) int { return len(r.ids[i]) }, idsPerPhase, 20*time.Second)

	stopAt := time.Now()
	require.NoError(t, c.Primary.StopImmediate(ctx))
	stopped.Store(true)
	for _, st := range stores {
		st.mark.Store(time.Now().UnixNano()) // the old primary is gone: any range now is the new one's
	}
	promoteAt := time.Now()
	require.NoError(t, c.Standby.Promote(ctx))
	r.promote = time.Since(promoteAt)

	waitFor("load after the failover", func(i int) int {
		if stores[i].first.Load() == 0 {
			return 0
		}
		return r.afterStop[i]
	}, idsPerPhase, 20*time.Second)
	close(done)
	wg.Wait()

	first := min(stores[0].first.Load(), stores[1].first.Load())
	r.recovered = time.Unix(0, first).Sub(stopAt)
	r.outage = max(outage[0], outage[1])
	conn, err := pgx.Connect(ctx, c.Standby.DSN("postgres"))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	require.NoError(t, conn.QueryRow(ctx, "SELECT max_id FROM leaf_alloc WHERE biz_tag = $1", failoverTag).Scan(&r.maxId))
	return r
}

func lastErr(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[len(errs)-1]
}

// duplicates counts the IDs issued more than once, over both generators.
func duplicates(r failover) int {
	seen := make(map[int64]bool, len(r.ids[0])+len(r.ids[1]))
	n := 0
	for _, ids := range r.ids {
		for _, id := range ids {
			if seen[id] {
				n++
			}
			seen[id] = true
		}
	}
	return n
}

// checkGuaranteed asserts what holds whatever the replication: each
// generator's IDs strictly increase (an instance never serves below a
// range it held), calls fail only as unavailable while no range can be
// had, and both generators serve again after the failover.
func checkGuaranteed(t *testing.T, r failover) {
	t.Helper()
	for i, ids := range r.ids {
		for k := 1; k < len(ids); k++ {
			if ids[k] <= ids[k-1] {
				t.Fatalf("generator %d: id %d after %d (position %d): not increasing", i, ids[k], ids[k-1], k)
			}
		}
		for _, err := range r.errs[i] {
			require.ErrorIs(t, err, intf.ErrUnavailable, "generator %d", i)
		}
		assert.GreaterOrEqual(t, r.afterStop[i], idsPerPhase, "generator %d serves after the failover", i)
	}
}

func TestFailoverSynchronousStandby(t *testing.T) {
	t.Parallel() // its own cluster
	c := pgtest.NewCluster(t, pgtest.ClusterOptions{Sync: true})
	ctx := context.Background()
	t.Run("synchronous_commit below on is refused", func(t *testing.T) {
		for _, level := range []string{"remote_write", "local", "off"} {
			_, err := pgstore.OpenOptions(ctx, c.DSN("postgres")+"&options=-c%20synchronous_commit%3D"+level, pgstore.Options{})
			require.ErrorIs(t, err, pgstore.ErrUnsafeReplication, level)
			assert.ErrorContains(t, err, `synchronous_commit is "`+level+`"`)
		}
		for _, level := range []string{"on", "remote_apply"} {
			st, err := pgstore.OpenOptions(ctx, c.DSN("postgres")+"&options=-c%20synchronous_commit%3D"+level, pgstore.Options{})
			require.NoError(t, err, level)
			require.NoError(t, st.Close())
		}
	})

	r := runFailover(t, c, pgstore.Options{})
	checkGuaranteed(t, r)
	require.Zero(t, duplicates(r), "no ID is issued twice across a failover to a synchronous standby")
	highest := max(slices.Max(r.ids[0]), slices.Max(r.ids[1]))
	require.Greater(t, r.maxId, highest, "the new primary's max_id is above every ID issued: it lost no range")
	t.Logf("failover to a synchronous standby: %d + %d IDs, no duplicate; pg_ctl promote took %s; "+
		"time to recover (primary stopped -> first range from the new primary): %s; longest run of failing calls: %s (%d + %d calls failed)",
		len(r.ids[0]), len(r.ids[1]), r.promote.Round(time.Millisecond), r.recovered.Round(time.Millisecond),
		r.outage.Round(time.Millisecond), len(r.errs[0]), len(r.errs[1]))

	st, err := pgstore.OpenOptions(ctx, c.DSN("postgres"), pgstore.Options{})
	require.NoError(t, err)
	defer st.Close()
	_, _, err = st.Alloc(ctx, failoverTag, 0)
	require.NoError(t, err, "the new primary allocates: its cascade is its synchronous standby")

	// Its standby gone, a commit waits for it; cancelling that wait
	// (pg_cancel_backend) makes PostgreSQL confirm the commit with only a
	// WARNING: committed here, not on any standby. The range is not used.
	require.NoError(t, c.Cascade.StopImmediate(ctx))
	allocErr := make(chan error, 1)
	go func() {
		actx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, _, err := st.Alloc(actx, failoverTag, 0)
		allocErr <- err
	}()
	require.Eventually(t, func() bool {
		conn, err := pgx.Connect(ctx, c.Standby.DSN("postgres"))
		if err != nil {
			return false
		}
		defer conn.Close(context.Background())
		var cancelled int
		err = conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&cancelled)
		return err == nil && cancelled > 0
	}, 10*time.Second, 20*time.Millisecond, "an allocation waits for the synchronous standby")
	err = <-allocErr
	require.ErrorIs(t, err, pgstore.ErrUnconfirmedCommit)
	assert.ErrorContains(t, err, "synchronous replication", "the server's warning is quoted")

	// The new primary turns asynchronous (its standby's name dropped, a
	// reload): the next allocation is refused, loudly.
	require.NoError(t, c.Standby.Exec(ctx, `ALTER SYSTEM SET synchronous_standby_names = ''`, `SELECT pg_reload_conf()`))
	require.Eventually(t, func() bool {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second) // until the reload is seen, a commit would wait
		defer cancel()
		_, _, err = st.Alloc(actx, failoverTag, 0)
		return errors.Is(err, pgstore.ErrUnsafeReplication)
	}, 20*time.Second, 10*time.Millisecond, "last error: %v", err)
	assert.ErrorContains(t, err, "synchronous_standby_names is empty")
	assert.ErrorContains(t, err, "segmentAllowAsyncFailover: true")
	assert.NotZero(t, st.Refusals())
}

func TestFailoverAsynchronousStandby(t *testing.T) {
	t.Parallel() // its own cluster
	c := pgtest.NewCluster(t, pgtest.ClusterOptions{Sync: false})
	ctx := context.Background()

	t.Run("refused without the override", func(t *testing.T) {
		_, err := pgstore.OpenOptions(ctx, c.DSN("postgres"), pgstore.Options{})
		require.ErrorIs(t, err, pgstore.ErrUnsafeReplication)
		var re *pgstore.ReplicationError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, 2, re.Hosts)
		assert.Equal(t, c.Primary.Addr(), re.Server)
		assert.ErrorContains(t, err, "synchronous_standby_names is empty")
		assert.ErrorContains(t, err, "segmentAllowAsyncFailover: true")
	})
	t.Run("one host is not refused", func(t *testing.T) {
		st, err := pgstore.OpenOptions(ctx, c.Primary.DSN("postgres"), pgstore.Options{})
		require.NoError(t, err)
		require.NoError(t, st.Close())
	})
	t.Run("a standby is refused", func(t *testing.T) {
		_, err := pgstore.OpenOptions(ctx, c.Standby.DSN("postgres")+"&target_session_attrs=standby", pgstore.Options{})
		require.ErrorIs(t, err, pgstore.ErrStandby)
		assert.ErrorContains(t, err, "is a standby")
	})

	r := runFailover(t, c, pgstore.Options{AllowAsyncFailover: true})
	checkGuaranteed(t, r)
	// Whether a range is lost depends on what the standby had received
	// when the primary stopped: it may or may not happen, so it is
	// reported, not asserted.
	highest := max(slices.Max(r.ids[0]), slices.Max(r.ids[1]))
	t.Logf("failover to an asynchronous standby (segmentAllowAsyncFailover: true): %d + %d IDs, %d issued twice; "+
		"the new primary's max_id %d, the highest ID issued %d (a lost range shows as max_id <= it); "+
		"pg_ctl promote took %s; time to recover: %s; longest run of failing calls: %s",
		len(r.ids[0]), len(r.ids[1]), duplicates(r), r.maxId, highest, r.promote.Round(time.Millisecond),
		r.recovered.Round(time.Millisecond), r.outage.Round(time.Millisecond))
}
