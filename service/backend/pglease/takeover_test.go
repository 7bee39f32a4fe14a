package pglease_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// collect calls GenId in a loop until stop is closed and returns the IDs
// issued; fenced counts the calls refused with ErrFenced. issued says how
// many IDs it has so far, while it runs.
func collect(svc *service.Service, stop <-chan struct{}) (ids func() ([]int64, int), issued func() int) {
	var mu sync.Mutex
	var got []int64
	fenced := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			id, err := svc.GenId(bg)
			mu.Lock()
			switch {
			case err == nil:
				got = append(got, int64(id))
			case errors.Is(err, intf.ErrFenced):
				fenced++
			}
			mu.Unlock()
			if err != nil {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	ids = func() ([]int64, int) {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return got, fenced
	}
	issued = func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}
	return ids, issued
}

// A claim made to lapse behind its holder's back (the database decides
// expiry) is taken over: the new holder starts above every mark the old
// one stored — which covers the old one's validity — and the old one,
// finding another token in the row, stops and cannot claim again (the
// range has one id). The two never issue one ID.
func TestTakeoverStartsAboveTheOldMarkAndNeverDuplicates(t *testing.T) {
	t.Parallel()
	dsn := newDSN(t)
	p := nettest.NewProxy(t, hostOf(t, dsn))
	a, la := startNode(t, viaProxy(t, dsn, p.Addr()), "a", withRange(3, 3))
	stop := make(chan struct{})
	fromA, issuedA := collect(a, stop)
	eventually(t, time.Minute, "a issues", func() bool { return issuedA() > 0 })
	c := db(t, dsn)
	old, ok := rowOf(t, c, 3)
	require.True(t, ok)
	// a's statements are held meanwhile: a renewal of its lapsed row (still
	// its token: legitimate) must not beat b's claim.
	p.Freeze()
	_, err := c.Exec(bg, `UPDATE vesta_machines SET expires_at = now() - interval '1 second' WHERE machine = 3`)
	require.NoError(t, err)
	b, _ := startNode(t, dsn, "b", withRange(3, 3))
	p.Thaw()
	fromB, issuedB := collect(b, stop)
	eventually(t, 3*testTTL, "a finds its id taken over and stops issuing", func() bool {
		_, err := a.GenId(bg)
		return errors.Is(err, intf.ErrFenced)
	})
	eventually(t, time.Minute, "b issues", func() bool { return issuedB() > 0 })
	close(stop)
	idsA, _ := fromA()
	idsB, _ := fromB()
	require.NotEmpty(t, idsA)
	require.NotEmpty(t, idsB)
	// Sorted, not a map with an assertion per ID: millions of IDs, and this
	// runs after the wait for the mark, on the suite's critical path.
	all := slices.Concat(idsA, idsB)
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("ID %d issued twice", all[i])
		}
	}
	firstB, lastA := idsB[0], int64(0)
	for _, id := range idsA {
		lastA = max(lastA, timeUnit(id))
	}
	assert.Less(t, lastA, timeUnit(firstB), "b starts above every ID of a")
	t.Logf("a issued %d IDs, b %d after taking over; none twice", len(idsA), len(idsB))
	cur, _ := rowOf(t, c, 3)
	assert.Equal(t, "b", cur.holder)
	assert.NotEqual(t, old.token, cur.token)
	assert.GreaterOrEqual(t, intf.DefaultEpochMillis+timeUnit(firstB)*1000, old.markMs, "b started above the mark a had stored")
	assert.Zero(t, la.Stats().MarkRefusals)
	// a claims again after it is fenced (h.Lost, then the release and the
	// claim's statements): the count comes later than the ErrFenced above.
	eventually(t, 3*testTTL, "a tried to claim again", func() bool { return la.Stats().ClaimTxns >= 2 })
}

// A holder cut off from the database stops issuing before its claim can
// lapse (TTL after its last renewal by the database clock) and resumes
// once a renewal gets through again, with the same id: nobody took it.
func TestCutHolderIsFencedBeforeItsClaimLapsesAndRecovers(t *testing.T) {
	t.Parallel()
	dsn := newDSN(t)
	p := nettest.NewProxy(t, hostOf(t, dsn))
	a, _ := startNode(t, viaProxy(t, dsn, p.Addr()), "a", withRange(4, 4))
	_, err := a.GenId(bg)
	require.NoError(t, err)
	c := db(t, dsn)

	p.Cut()
	var fencedAt time.Time
	eventually(t, 2*testTTL, "the cut holder is fenced", func() bool {
		_, err := a.GenId(bg)
		if errors.Is(err, intf.ErrFenced) {
			fencedAt = time.Now()
			return true
		}
		return false
	})
	r, ok := rowOf(t, c, 4)
	require.True(t, ok)
	assert.True(t, r.live, "fenced while its claim is still live in the database (at %s)", fencedAt.Format(time.StampMilli))

	p.Restore()
	eventually(t, 2*testTTL, "issuing again after the outage", func() bool {
		id, err := a.GenId(bg)
		return err == nil && machineOf(id) == 4
	})
	r2, _ := rowOf(t, c, 4)
	assert.Equal(t, r.token, r2.token, "the same claim, renewed")
}

func TestStoreMarkByFormerHolderFails(t *testing.T) {
	t.Parallel()
	dsn := newDSN(t)
	a, la := startNode(t, dsn, "a", withRange(2, 2))
	_, err := a.GenId(bg)
	require.NoError(t, err)
	c := db(t, dsn)
	_, err = c.Exec(bg, `UPDATE vesta_machines SET token = token + 1, mark_ms = 42 WHERE machine = 2`)
	require.NoError(t, err)
	err = la.StoreMark(bg, 2, time.Now().UnixMilli()+1000)
	require.Error(t, err)
	assert.ErrorIs(t, err, intf.ErrFenced)
	r, _ := rowOf(t, c, 2)
	assert.Equal(t, int64(42), r.markMs, "a former holder changes nothing")
	eventually(t, 2*testTTL, "the former holder stops issuing", func() bool {
		_, err := a.GenId(bg)
		return errors.Is(err, intf.ErrFenced)
	})
}
