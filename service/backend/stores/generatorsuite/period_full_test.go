package generatorsuite_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// A period whose {seq:N} is used up answers every call with a
// *intf.PeriodExhaustedError naming the tag, the period and the width,
// logged once per period, and draws nothing more from the database until
// the database's clock (which the test drives, with the node's) is in the
// next period, which starts at 1.
func TestPeriodExhausted(t *testing.T) {
	for name, newDB := range map[string]func(*testing.T) clockedDB{"sqlite": sqliteClocked, "postgres": postgresClocked} {
		t.Run(name, func(t *testing.T) { testPeriodExhausted(t, newDB(t)) })
	}
}

func testPeriodExhausted(t *testing.T, db clockedDB) {
	ctx := context.Background()
	clock := segtest.NewClock()
	clock.Advance(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC).Sub(clock.Now()))
	db.set(t, clock.Now())
	st := segtest.Wrap(db.open(t))
	pt := segstore.PeriodTag{Tag: "small", Group: segstore.GroupDay, Format: "S{yyMMdd}-{seq:2}", Step: 30}
	require.NoError(t, st.CreatePeriodTag(ctx, pt))
	var logs syncbuf.Buffer
	g, err := segment.New(ctx, segment.Settings{Store: st, Clock: clock, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })

	for seq := int64(1); seq <= 99; seq++ {
		n, err := g.NextNumber(ctx, "small")
		require.NoError(t, err)
		require.Equal(t, seq, n.Seq)
	}
	drawn := st.Calls() // [1, 31), [31, 61), [61, 91), [91, 121)
	require.Equal(t, int64(4), drawn)

	const logLine = "used up its period's numbers"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 250 {
				_, err := g.NextNumber(ctx, "small")
				var pe *intf.PeriodExhaustedError
				if !assert.ErrorAs(t, err, &pe) {
					return
				}
				assert.ErrorIs(t, err, intf.ErrPeriodExhausted)
				assert.ErrorIs(t, err, segstore.ErrNumberOverflow)
				assert.Equal(t, intf.PeriodExhaustedError{Tag: "small", Period: "20261127", Width: 2, Max: 99,
					Ends: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), RetryAfter: 12 * time.Hour}, *pe)
				for _, s := range []string{`"small"`, "20261127", "{seq:2}", "99"} {
					assert.Contains(t, err.Error(), s)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, drawn, st.Calls(), "2,000 refusals draw nothing from the database")
	assert.Equal(t, 1, strings.Count(logs.String(), logLine), "logged once for the period:\n%s", logs.String())

	// Later in the same period: still refused, still no store call.
	clock.Advance(11 * time.Hour)
	db.set(t, clock.Now())
	_, err = g.NextNumber(ctx, "small")
	require.ErrorIs(t, err, intf.ErrPeriodExhausted)
	assert.Equal(t, drawn, st.Calls())

	// The next period starts at 1; its own end is logged once more.
	clock.Advance(time.Hour)
	db.set(t, clock.Now())
	for seq := int64(1); seq <= 99; seq++ {
		n, err := g.NextNumber(ctx, "small")
		require.NoError(t, err)
		require.Equal(t, intf.SegmentNumber{Text: fmt.Sprintf("S261128-%02d", seq), Period: "20261128", Seq: seq}, n)
	}
	for range 10 {
		_, err = g.NextNumber(ctx, "small")
		require.ErrorIs(t, err, intf.ErrPeriodExhausted)
	}
	assert.Equal(t, 2, strings.Count(logs.String(), logLine))

	// What the database holds: the first period's counter stopped at the
	// end of the last range drawn.
	admin := db.open(t)
	defer admin.Close()
	ps, err := segstore.PeriodStoreOf(admin)
	require.NoError(t, err)
	db.set(t, time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC))
	r, err := ps.AllocPeriod(ctx, "small", 1)
	require.NoError(t, err)
	assert.Equal(t, int64(121), r.Start, "the period's sequence did not advance past the ranges drawn before it was used up")
}
