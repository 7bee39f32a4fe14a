package generatorsuite_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/segdefault"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// askTogether asks each tag once, all at the same moment (one goroutine
// per tag, released together), and returns each call's error.
func askTogether(tags []string, ask func(tag string) error) []error {
	errs := make([]error, len(tags))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, tag := range tags {
		wg.Go(func() {
			<-start
			errs[i] = ask(tag)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// Ten period tags first asked at the same moment are all served: one
// request's miss rereads the period tags and registers every one it
// reads, so the others find theirs instead of an "unknown" from the
// throttle. Tags made before the Generator started, and while it runs
// (after a first period tag was served); the plain tags' lookup the same.
func TestTagsFirstAskedTogether(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		db := b.newDB(t)
		admin := db.open(t) // another process: vesta-segment
		t.Cleanup(func() { _ = admin.Close() })
		ps, err := segstore.PeriodStoreOf(admin)
		require.NoError(t, err)
		createPeriod := func(prefix string) []string {
			var tags []string
			for i := range 10 {
				tag := fmt.Sprintf("%s%d", prefix, i)
				require.NoError(t, ps.CreatePeriodTag(ctx, segstore.PeriodTag{Tag: tag, Group: segstore.GroupDay,
					Format: fmt.Sprintf("N%d{yyyyMMdd}{seq:6}", i), Step: 5}))
				tags = append(tags, tag)
			}
			return tags
		}
		number := func(g *segment.Generator) func(string) error {
			return func(tag string) error {
				n, err := g.NextNumber(ctx, tag)
				if err == nil && n.Seq != 1 {
					err = fmt.Errorf("%s: seq %d, want 1", tag, n.Seq)
				}
				return err
			}
		}

		before := createPeriod("before")
		st := segtest.Wrap(db.open(t))
		clock := segtest.NewClock()
		g, err := segment.New(ctx, segment.Settings{Store: st, Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		for i, err := range askTogether(before, number(g)) {
			assert.NoError(t, err, "period tag %s, made before the start", before[i])
		}
		assert.Equal(t, int64(1), st.PeriodTagReads(), "one reread served them all")

		// At run time, a second after the last reread: the same.
		later := createPeriod("later")
		clock.Advance(segdefault.MissRefreshInterval)
		for i, err := range askTogether(later, number(g)) {
			assert.NoError(t, err, "period tag %s, made while the Generator runs", later[i])
		}
		assert.Equal(t, int64(2), st.PeriodTagReads())

		// A row whose format does not parse (edited with SQL) fails its
		// own requests, naming the row, and no other tag's.
		db.exec(t, `INSERT INTO vesta_period_tags (biz_tag, period_unit, format, step) VALUES ('broken', 'day', 'B{seq}', 5)`)
		fine := createPeriod("fine")
		clock.Advance(segdefault.MissRefreshInterval)
		errs := askTogether(append([]string{"broken"}, fine...), number(g))
		assert.ErrorIs(t, errs[0], intf.ErrInvalidArgument)
		assert.ErrorContains(t, errs[0], `period tag "broken": its row in vesta_period_tags`)
		for i, err := range errs[1:] {
			assert.NoError(t, err, "period tag %s, beside a broken row", fine[i])
		}

		// Plain tags made while it runs.
		var plain []string
		for i := range 10 {
			tag := fmt.Sprintf("plain%d", i)
			require.NoError(t, admin.CreateTag(ctx, segstore.TagInfo{Tag: tag, MaxId: 1, Step: 5}))
			plain = append(plain, tag)
		}
		reads := st.TagReads()
		clock.Advance(segdefault.MissRefreshInterval)
		for i, err := range askTogether(plain, func(tag string) error { _, err := g.NextId(ctx, tag); return err }) {
			assert.NoError(t, err, "plain tag %s, made while the Generator runs", plain[i])
		}
		assert.Equal(t, reads+1, st.TagReads())
	})
}
