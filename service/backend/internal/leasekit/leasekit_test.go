package leasekit

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/machineid"
)

func TestNextSkip(t *testing.T) {
	refused := &machineid.MarksAheadError{Refused: []machineid.MarkRefusal{{Machine: 3}, {Machine: 5}}, Err: intf.ErrClockBehind}
	assert.Equal(t, map[int64]bool{1: true, 3: true, 5: true}, NextSkip(map[int64]bool{1: true}, refused),
		"the ids refused so far are skipped by the next attempt")
	refused.Exhausted = true
	assert.Nil(t, NextSkip(map[int64]bool{1: true}, refused), "every free id was tried: start over")
	assert.Nil(t, NextSkip(map[int64]bool{1: true}, errors.New("etcd down")), "another failure: start over")
}

func TestRefuseStopsAtTheBound(t *testing.T) {
	e := &machineid.MarksAheadError{}
	skip := map[int64]bool{}
	now := time.Now().UnixNano()
	for i := range int64(machineid.MaxMarkRefusals) {
		r, full := refuse(e, i, now/int64(time.Millisecond)+10_000, now, intf.ErrClockBehind, skip)
		assert.Equal(t, i == machineid.MaxMarkRefusals-1, full)
		assert.InDelta(t, float64(10*time.Second), float64(r.Ahead), float64(time.Millisecond))
	}
	assert.Len(t, skip, machineid.MaxMarkRefusals)
	assert.ErrorIs(t, e, intf.ErrClockBehind)
}

func TestOfflineValidity(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const ms = int64(time.Millisecond)
	st := State{Saved: 1000 * ms, ValidUntil: 5000 * ms, StoredMarkMs: 4000}
	assert.Equal(t, 4000*ms, st.OfflineValidity(2000*ms, log, "p", "db", nil), "no later than the mark known stored")
	st.StoredMarkMs = 9000
	assert.Equal(t, 5000*ms, st.OfflineValidity(2000*ms, log, "p", "db", nil), "no later than the saved validity")
	assert.Zero(t, st.OfflineValidity(5000*ms, log, "p", "db", nil), "the validity has run out")
	assert.Zero(t, st.OfflineValidity(500*ms, log, "p", "db", nil), "a clock before the save stepped back: nothing is trusted")
}

func TestPick(t *testing.T) {
	r := machineid.Range{First: 10, Last: 19}
	taken := map[int64]bool{10: true, 12: true}
	id, ok := Pick(r, 15, nil, taken, false)
	assert.True(t, ok)
	assert.Equal(t, int64(15), id, "a free preference first")
	for range 200 {
		id, ok := Pick(r, 12, map[int64]bool{11: true}, taken, false)
		require.True(t, ok)
		assert.True(t, r.Contains(id) && !taken[id] && id != 11, "a taken preference is passed over for a free id of the range, never a skipped one: %d", id)
	}
	_, ok = Pick(machineid.Range{First: 3, Last: 4}, -1, map[int64]bool{4: true}, map[int64]bool{3: true}, false)
	assert.False(t, ok, "nothing free")
	id, ok = Pick(machineid.Range{First: 7, Last: 7}, -1, nil, nil, false)
	assert.True(t, ok)
	assert.Equal(t, int64(7), id, "unlisted: any id of the range may be free")
	seen := map[int64]bool{}
	for range 400 {
		id, _ := Pick(machineid.FullRange, -1, nil, nil, false)
		seen[id] = true
	}
	assert.Greater(t, len(seen), 200, "starters spread over the range instead of racing for the lowest id")
	id, ok = Pick(r, -1, map[int64]bool{11: true}, taken, true)
	assert.True(t, ok)
	assert.Equal(t, int64(13), id, "lowestFirst (tests): the lowest free id")
}

func TestParseRange(t *testing.T) {
	for in, want := range map[string]machineid.Range{"0-511": {First: 0, Last: 511}, " 512 - 1023 ": {First: 512, Last: 1023}, "7": {First: 7, Last: 7}} {
		r, err := machineid.ParseRange(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, r)
	}
	for _, in := range []string{"", "5-4", "0-1024", "-1-3", "a-b", "1-2-3", "0x1-2"} {
		_, err := machineid.ParseRange(in)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, in)
		if err != nil {
			assert.Contains(t, err.Error(), "machine range")
		}
	}
	assert.True(t, machineid.Range{First: 0, Last: 511}.Overlaps(machineid.Range{First: 511, Last: 600}))
	assert.False(t, machineid.Range{First: 0, Last: 511}.Overlaps(machineid.Range{First: 512, Last: 1023}))
}

func TestFenceComesBeforeExpiry(t *testing.T) {
	for _, ttl := range []time.Duration{lease.MinTTL, lease.DefaultTTL, lease.MaxTTL} {
		v := Validity(ttl)
		assert.Less(t, v, ttl, "fenced before the coordinator can expire the claim")
		assert.Greater(t, v, 2*RenewInterval(ttl), "two renewals may fail before the fence")
		assert.Less(t, Validity(ttl-time.Second), v, "a shorter TTL granted shortens the validity")
	}
}

func TestCommonOptions(t *testing.T) {
	var c lease.Common
	require.Nil(t, Fill(&c, "p"))
	assert.Equal(t, []time.Duration{lease.DefaultTTL, lease.DefaultDialTimeout, lease.DefaultMaxClockSkew}, []time.Duration{c.TTL, c.DialTimeout, c.MaxClockSkew})
	assert.Equal(t, lease.DefaultPrefix, c.Prefix)
	assert.NotEmpty(t, c.NodeName)
	assert.NotNil(t, c.Logger)
	c.TTL = 1500 * time.Millisecond
	var oe *lease.OptionError
	require.ErrorAs(t, Fill(&c, "p"), &oe)
	assert.Equal(t, "TTL", oe.Option)
	assert.Equal(t, "p", oe.Provider)
	c.TTL, c.MachineRange = lease.DefaultTTL, &machineid.Range{First: 5, Last: 4}
	require.ErrorAs(t, Fill(&c, "p"), &oe)
	assert.Equal(t, "MachineRange", oe.Option)
}
