package service_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

var (
	bg         = context.Background()
	discardLog = slog.New(slog.DiscardHandler)
	bothTypes  = []intf.IdType{intf.MaxPeak, intf.MinGranularity}
)

// newSvc starts a Service for a test and closes it when the test ends.
// Unless the settings say otherwise it runs without a data dir (so no mark
// limits how far a fake clock may jump) and logs nothing.
func newSvc(t testing.TB, s service.Settings) *service.Service {
	t.Helper()
	if s.DataDir == "" {
		s.NoDataDir = true
	}
	if s.Logger == nil {
		s.Logger = discardLog
	}
	svc, err := service.New(bg, s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

// layoutOf returns the layout of typ, failing the test on error.
func layoutOf(t testing.TB, typ intf.IdType) intf.Layout {
	t.Helper()
	l, err := typ.Layout()
	require.NoError(t, err)
	return l
}

// unitSeq splits an ID into its time field and sequence.
func unitSeq(l intf.Layout, id intf.Id) (unit, seq int64) {
	return l.Time.Get(uint64(id)), l.Seq.Get(uint64(id))
}

// checkUnique proves a large set of IDs of one service has no duplicate,
// with one bit per possible (time unit, seq) pair in the units seen: IDs of
// one service differ only in those two fields, and the others must all be
// equal. Much cheaper than a map or a sort of millions of IDs, which matters
// under -race. It returns how many IDs it checked.
func checkUnique(l intf.Layout, ids [][]intf.Id) (total int, err error) {
	fixedMask := ^((uint64(l.Time.Max()) << l.Time.Shift) | (uint64(l.Seq.Max()) << l.Seq.Shift))
	var fixed uint64
	fixedSet := false
	minU, maxU := int64(1)<<62, int64(-1)
	tf := l.Time
	for _, s := range ids {
		for _, id := range s {
			u := tf.Get(uint64(id))
			minU, maxU = min(minU, u), max(maxU, u)
			if !fixedSet {
				fixed, fixedSet = uint64(id)&fixedMask, true
			}
			if uint64(id)&fixedMask != fixed {
				return 0, fmt.Errorf("id %d %v: fixed fields differ from the first ID's", id, fieldsOf(id))
			}
		}
		total += len(s)
	}
	if total == 0 {
		return 0, nil
	}
	seqSpan := l.Seq.Max() + 1
	span := (maxU - minU + 1) * seqSpan
	if span > 1<<28 {
		// Spread over too many units for a bitmap: sort a copy.
		all := make([]intf.Id, 0, total)
		for _, s := range ids {
			all = append(all, s...)
		}
		slices.Sort(all)
		for i := 1; i < len(all); i++ {
			if all[i] == all[i-1] {
				return 0, fmt.Errorf("duplicate ID %d %v", all[i], fieldsOf(all[i]))
			}
		}
		return total, nil
	}
	bits := make([]uint64, (span+63)/64)
	tf, sf := l.Time, l.Seq // not the whole Layout per ID: this runs millions of times
	for _, s := range ids {
		for _, id := range s {
			u, q := tf.Get(uint64(id)), sf.Get(uint64(id))
			k := (u-minU)*seqSpan + q
			w, b := k/64, uint64(1)<<(k%64)
			if bits[w]&b != 0 {
				return 0, fmt.Errorf("duplicate ID %d %v", id, fieldsOf(id))
			}
			bits[w] |= b
		}
	}
	return total, nil
}

// fieldsOf decodes an ID by its own type bit, independently of a Service.
func fieldsOf(id intf.Id) intf.IdFields {
	_, l := intf.Decode(id)
	u := uint64(id)
	return intf.IdFields{Machine: l.Machine.Get(u), Seq: l.Seq.Get(u), Time: l.Time.Get(u),
		GenMethod: l.GenMethod.Get(u), Type: l.TypeBit.Get(u), Version: l.Version.Get(u)}
}

// logBuffer collects what a Service logs, for tests that check it.
type logBuffer struct{ syncbuf.Buffer }

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// assertStrictlyIncreasing checks that the (time, seq) pairs of ids, in
// issue order, strictly increase.
func assertStrictlyIncreasing(t testing.TB, l intf.Layout, ids []intf.Id) {
	t.Helper()
	tf, sf := l.Time, l.Seq // not the whole Layout per ID: this runs millions of times
	for i := 1; i < len(ids); i++ {
		pu, ps := tf.Get(uint64(ids[i-1])), sf.Get(uint64(ids[i-1]))
		u, s := tf.Get(uint64(ids[i])), sf.Get(uint64(ids[i]))
		if u < pu || (u == pu && s <= ps) {
			require.Failf(t, "not strictly increasing", "ids[%d] = (time %d, seq %d) after ids[%d] = (time %d, seq %d)", i, u, s, i-1, pu, ps)
		}
	}
}

func TestCheckUniqueFindsDuplicates(t *testing.T) {
	// The checker itself must be able to fail.
	l := layoutOf(t, intf.MinGranularity)
	_, err := checkUnique(l, [][]intf.Id{{1 << 20, 2 << 20}, {3 << 20, 2 << 20}})
	assert.ErrorContains(t, err, "duplicate ID")
	_, err = checkUnique(l, [][]intf.Id{{1<<20 | 1, 1 << 20}})
	assert.ErrorContains(t, err, "fixed fields differ")
	n, err := checkUnique(l, [][]intf.Id{{1 << 20, 2 << 20, 1<<20 | 1<<10}, {5 << 20}})
	assert.NoError(t, err)
	assert.Equal(t, 4, n)
	// Far apart units take the sorting path.
	_, err = checkUnique(l, [][]intf.Id{{1 << 20, 1 << 50}, {1 << 20}})
	assert.ErrorContains(t, err, "duplicate ID")
	n, err = checkUnique(l, [][]intf.Id{{1 << 20, 1 << 50}, {1<<20 | 1<<10}})
	assert.NoError(t, err)
	assert.Equal(t, 3, n)
}
