package access_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
)

// A range counts its IDs, is cut to the burst, and a range of the tag's
// step (size 0) is charged once its size is known.
func TestRangeCountsItsIds(t *testing.T) {
	clock := newFakeClock()
	g := newGuard(t, clock, access.Client{Name: "bulk", Tokens: [][32]byte{sum("t")}, Scopes: []access.Scope{"segment:*"},
		Rate: 1000, Burst: 2000})
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)
	ctx := context.Background()

	// Larger than the burst: cut to it, and the whole burst is taken.
	rg, err := g.TakeRange(ctx, c, "", 10_000_000)
	require.NoError(t, err)
	assert.Equal(t, int64(2000), rg.Size, "the size asked of the store")
	got := rg.Settle(intf.SegmentRange{Start: 100, End: 2100}, nil)
	assert.Equal(t, intf.SegmentRange{Start: 100, End: 2100}, got)
	_, err = g.TakeRange(ctx, c, "", 1)
	var rl *intf.RateLimitError
	require.ErrorAs(t, err, &rl, "the range took the burst")
	assert.Equal(t, time.Millisecond, rl.RetryAfter)

	// A failed allocation takes nothing.
	clock.Advance(time.Second)
	rg, err = g.TakeRange(ctx, c, "", 1000)
	require.NoError(t, err)
	rg.Settle(intf.SegmentRange{}, errors.New("store down"))
	rg, err = g.TakeRange(ctx, c, "", 1000)
	require.NoError(t, err, "refunded")
	rg.Settle(intf.SegmentRange{Start: 0, End: 1000}, nil)

	// The tag's step: one ID taken before, the range cut to the burst
	// after, and charged whole (into debt).
	clock.Advance(2 * time.Second) // full again
	rg, err = g.TakeRange(ctx, c, "", 0)
	require.NoError(t, err)
	assert.Equal(t, int64(0), rg.Size, "the tag's step is asked")
	got = rg.Settle(intf.SegmentRange{Start: 5000, End: 1_005_000}, nil)
	assert.Equal(t, intf.SegmentRange{Start: 5000, End: 7000}, got, "cut to the burst")
	_, err = g.TakeRange(ctx, c, "", 1)
	require.ErrorAs(t, err, &rl)

	clock.Advance(time.Second)
	rg, err = g.TakeRange(ctx, c, "", 0)
	require.NoError(t, err)
	got = rg.Settle(intf.SegmentRange{Start: 0, End: 1500}, nil)
	assert.Equal(t, int64(1500), got.End-got.Start)
	_, err = g.TakeRange(ctx, c, "", 1)
	require.ErrorAs(t, err, &rl, "a step of 1500 with 1000 in the bucket leaves a debt of 500")
	assert.Equal(t, 501*time.Millisecond, rl.RetryAfter)

	st := g.Stats()
	assert.Equal(t, uint64(2000+1000+2000+1500), st.Clients[0].Ids, "the client's count is of IDs handed out")
}

// Without a quota a range is neither cut nor counted against anything.
func TestRangeWithoutQuota(t *testing.T) {
	g := newGuard(t, newFakeClock(), access.Client{Name: "free", Tokens: [][32]byte{sum("t")}, Scopes: []access.Scope{"segment:*"}})
	c, err := g.Authenticate("t", "")
	require.NoError(t, err)
	for range 3 {
		rg, err := g.TakeRange(context.Background(), c, "", 10_000_000)
		require.NoError(t, err)
		assert.Equal(t, int64(10_000_000), rg.Size)
		r := rg.Settle(intf.SegmentRange{Start: 0, End: 10_000_000}, nil)
		assert.Equal(t, int64(10_000_000), r.End)
	}
	assert.Equal(t, uint64(30_000_000), g.Stats().Clients[0].Ids)
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
	rg, err := g.TakeRange(context.Background(), caller, "192.0.2.1:5000", 10_000_000)
	fmt.Println(rg.Size, err) // cut to the burst: the size to ask the store
	r := rg.Settle(intf.SegmentRange{Start: 0, End: rg.Size}, nil)
	fmt.Println(r.End-r.Start, g.Stats().Clients[0].Ids)
	// Output:
	// 5000 <nil>
	// 5000 5000
}
