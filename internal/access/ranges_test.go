package access_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
)

// rangeStore hands out ranges from one counter, as the segment store does:
// exactly size IDs, or the tag's step for size 0. drawn counts what it
// allocated.
type rangeStore struct {
	step        int64
	next, drawn atomic.Int64
	err         error // of every call, when set
}

func (s *rangeStore) NextRange(_ context.Context, _ string, size int64) (intf.SegmentRange, error) {
	if s.err != nil {
		return intf.SegmentRange{}, s.err
	}
	if size == 0 {
		size = s.step
	}
	end := s.next.Add(size)
	s.drawn.Add(size)
	return intf.SegmentRange{Start: end - size, End: end}, nil
}

func (s *rangeStore) Step(context.Context, string) (int64, error) { return s.step, s.err }

// stepless is a SegmentRanger that cannot tell its step.
type stepless struct{ s *rangeStore }

func (s stepless) NextRange(ctx context.Context, tag string, size int64) (intf.SegmentRange, error) {
	return s.s.NextRange(ctx, tag, size)
}

// takeRange takes and settles one range of size from store.
func takeRange(g *access.Guard, c access.Caller, store intf.SegmentRanger, size int64) (intf.SegmentRange, error) {
	rg, err := g.TakeRange(context.Background(), c, "", store, "order", size)
	if err != nil {
		return intf.SegmentRange{}, err
	}
	r, err := store.NextRange(context.Background(), "order", rg.Size)
	return rg.Settle(r, err), err
}

// A sized range is charged its IDs, cut to the burst, before the store is
// asked; a failed allocation takes nothing.
func TestRangeCountsItsIds(t *testing.T) {
	clock := newFakeClock()
	g := newGuard(t, clock, access.Client{Name: "bulk", Tokens: [][32]byte{sum("t")}, Scopes: []access.Scope{"segment:*"},
		Rate: 1000, Burst: 2000})
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)
	store := &rangeStore{step: 1000}

	// Larger than the burst: cut to it, and the whole burst is taken.
	rg, err := g.TakeRange(context.Background(), c, "", store, "order", 10_000_000)
	require.NoError(t, err)
	assert.Equal(t, int64(2000), rg.Size, "the size asked of the store")
	got := rg.Settle(intf.SegmentRange{Start: 100, End: 2100}, nil)
	assert.Equal(t, intf.SegmentRange{Start: 100, End: 2100}, got)
	_, err = takeRange(g, c, store, 1)
	var rl *intf.RateLimitError
	require.ErrorAs(t, err, &rl, "the range took the burst")
	assert.Equal(t, time.Millisecond, rl.RetryAfter)

	// A failed allocation takes nothing; a store answering more than was
	// charged is cut to it.
	clock.Advance(time.Second)
	rg, err = g.TakeRange(context.Background(), c, "", store, "order", 1000)
	require.NoError(t, err)
	rg.Settle(intf.SegmentRange{}, errors.New("store down"))
	rg, err = g.TakeRange(context.Background(), c, "", store, "order", 1000)
	require.NoError(t, err, "refunded")
	assert.Equal(t, intf.SegmentRange{Start: 0, End: 1000}, rg.Settle(intf.SegmentRange{Start: 0, End: 5000}, nil))

	st := g.Stats()
	assert.Equal(t, uint64(2000+1000), st.Clients[0].Ids, "the client's count is of IDs handed out")
}

// A range of the tag's step (size 0) takes what the bucket holds now, at
// most the burst and the tag's step, asks the store for exactly that, and
// never leaves a debt.
func TestStepRangeTakesWhatTheBucketHolds(t *testing.T) {
	clock := newFakeClock()
	g := newGuard(t, clock, access.Client{Name: "bulk", Tokens: [][32]byte{sum("t")}, Scopes: []access.Scope{"segment:*"},
		Rate: 100, Burst: 100})
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)
	store := &rangeStore{step: 1000}

	r, err := takeRange(g, c, store, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(100), r.Size(), "the burst, not the step of 1000")
	assert.Equal(t, int64(100), store.drawn.Load(), "the store is asked for what is handed out")
	_, err = takeRange(g, c, store, 0)
	var rl *intf.RateLimitError
	require.ErrorAs(t, err, &rl, "nothing left")
	assert.Equal(t, 10*time.Millisecond, rl.RetryAfter, "until one ID is back: no debt to wait out")

	clock.Advance(255 * time.Millisecond)
	r, err = takeRange(g, c, store, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(25), r.Size(), "the whole IDs the bucket held")

	// A step smaller than the bucket: the step.
	clock.Advance(time.Second)
	store.step = 30
	r, err = takeRange(g, c, store, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(30), r.Size())
	r, err = takeRange(g, c, store, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(30), r.Size(), "70 were left")

	// A ranger that cannot tell its step: the burst caps the range, and
	// the store is still asked for what was charged, not its step.
	clock.Advance(time.Second)
	store.step = 1000
	r, err = takeRange(g, c, stepless{store}, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(100), r.Size())

	// A tag the store does not know: nothing taken.
	clock.Advance(time.Second)
	store.err = fmt.Errorf("segment tag %q: %w", "order", intf.ErrUnknownTag)
	_, err = takeRange(g, c, store, 0)
	require.ErrorIs(t, err, intf.ErrUnknownTag)
	store.err = nil
	r, err = takeRange(g, c, store, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(100), r.Size(), "the failed call took nothing")

	assert.Equal(t, store.next.Load(), store.drawn.Load())
	assert.Equal(t, uint64(100+25+30+30+100+100), g.Stats().Clients[0].Ids)
}

// Under any concurrency the IDs handed out by ranges stay within
// rate × time + burst, and the store draws no more than is handed out:
// every round, all callers take their range before any of them settles
// (the worst case for a charge made after the store answered).
func TestConcurrentRangesHoldTheQuota(t *testing.T) {
	const rate, burst, callers, rounds = 100, 100, 64, 40
	const tick = 37 * time.Millisecond
	clock := newFakeClock()
	p, err := access.NewPolicy([]access.Client{{Name: "bulk", Tokens: [][32]byte{sum("t")},
		Scopes: []access.Scope{"segment:*"}, Rate: rate, Burst: burst}})
	require.NoError(t, err)
	g, err := access.NewGuard(access.Options{Policy: p, Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
		Sleep: func(context.Context, time.Duration) error { return nil }}) // a held call is tried again at once
	require.NoError(t, err)
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)
	store := &rangeStore{step: 1000}
	began := clock.Now()

	var handed, refused atomic.Int64
	for range rounds {
		var took sync.WaitGroup
		settle := make(chan struct{})
		var done sync.WaitGroup
		for i := range callers {
			took.Add(1)
			done.Go(func() {
				size := int64(0)
				if i%4 == 0 {
					size = 30 // a sized range among them
				}
				rg, err := g.TakeRange(context.Background(), c, "", store, "order", size)
				took.Done()
				<-settle
				if err != nil {
					assert.ErrorIs(t, err, intf.ErrRateLimited)
					refused.Add(1)
					return
				}
				r, err := store.NextRange(context.Background(), "order", rg.Size)
				handed.Add(rg.Settle(r, err).Size())
			})
		}
		took.Wait()
		close(settle)
		done.Wait()
		clock.Advance(tick)
	}
	allowed := int64(burst + rate*clock.Now().Sub(began).Seconds())
	t.Logf("%d callers × %d rounds: %d IDs handed out (allowed %d), %d drawn, %d refusals",
		callers, rounds, handed.Load(), allowed, store.drawn.Load(), refused.Load())
	assert.LessOrEqual(t, handed.Load(), allowed, "rate × time + burst")
	assert.Equal(t, handed.Load(), store.drawn.Load(), "the store drew what was handed out")
	assert.Equal(t, uint64(handed.Load()), g.Stats().Clients[0].Ids)
	assert.Positive(t, handed.Load())
}

// Without a quota a range is neither cut nor counted against anything,
// and a range of the tag's step is asked of the store as such.
func TestRangeWithoutQuota(t *testing.T) {
	g := newGuard(t, newFakeClock(), access.Client{Name: "free", Tokens: [][32]byte{sum("t")}, Scopes: []access.Scope{"segment:*"}})
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)
	store := &rangeStore{step: 1000}
	for range 3 {
		r, err := takeRange(g, c, store, 10_000_000)
		require.NoError(t, err)
		assert.Equal(t, int64(10_000_000), r.Size())
	}
	rg, err := g.TakeRange(context.Background(), c, "", store, "order", 0)
	require.NoError(t, err)
	assert.Equal(t, int64(0), rg.Size, "the tag's step")
	r, err := store.NextRange(context.Background(), "order", rg.Size)
	require.NoError(t, err)
	assert.Equal(t, int64(1000), rg.Settle(r, nil).Size())
	assert.Equal(t, uint64(30_001_000), g.Stats().Clients[0].Ids)
}

func ExampleGuard_TakeRange() {
	token := "vesta_example-token"
	policy, err := access.NewPolicy([]access.Client{{
		Name: "cache", Tokens: [][32]byte{access.HashToken(token)},
		Scopes: []access.Scope{access.SegmentScope("order")},
		Rate:   1000, Burst: 5000,
	}})
	if err != nil {
		panic(err)
	}
	g, err := access.NewGuard(access.Options{Policy: policy})
	if err != nil {
		panic(err)
	}
	caller, _ := g.Authenticate(token, "192.0.2.1:5000")
	var store intf.SegmentRanger // the segment service, e.g. a *segment.Generator
	rg, err := g.TakeRange(context.Background(), caller, "192.0.2.1:5000", store, "order", 10_000_000)
	fmt.Println(rg.Size, err) // cut to the burst, and charged: the size to ask the store
	r := rg.Settle(intf.SegmentRange{Start: 0, End: rg.Size}, nil)
	fmt.Println(r.End-r.Start, g.Stats().Clients[0].Ids)
	// Output:
	// 5000 <nil>
	// 5000 5000
}
