package etcdlease

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

func TestMedianSkew(t *testing.T) {
	const sec = int64(time.Second)
	now := 1_800_000_000 * sec
	ms := func(d time.Duration) int64 { return (now + int64(d)) / int64(time.Millisecond) }
	age := time.Second
	cases := []struct {
		name    string
		reports []int64
		want    time.Duration
	}{
		{"within a report's age", []int64{ms(-500 * time.Millisecond)}, 0},
		{"ahead of a fresh report", []int64{ms(-3 * time.Second)}, 2 * time.Second},
		{"behind a report", []int64{ms(2 * time.Second)}, -2 * time.Second},
		{"one outlier does not count", []int64{ms(0), ms(-100 * time.Millisecond), ms(time.Hour)}, 0},
		{"even count: mean of the middle two", []int64{ms(2 * time.Second), ms(4 * time.Second)}, -3 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, medianSkew(now, tc.reports, age))
		})
	}
}

func TestPick(t *testing.T) {
	r := Range{First: 10, Last: 19}
	taken := map[int64]bool{10: true, 12: true}
	id, ok := pick(r, choice{prefer: 15}, taken, false)
	assert.True(t, ok)
	assert.Equal(t, int64(15), id, "a free preference first")
	for range 200 {
		id, ok := pick(r, choice{prefer: 12, skip: map[int64]bool{11: true}}, taken, false)
		require.True(t, ok)
		assert.True(t, r.Contains(id) && !taken[id] && id != 11, "a taken preference is passed over for a free id of the range, never a skipped one: %d", id)
	}
	_, ok = pick(Range{First: 3, Last: 4}, choice{prefer: -1, skip: map[int64]bool{4: true}}, map[int64]bool{3: true}, false)
	assert.False(t, ok, "nothing free")
	id, ok = pick(Range{First: 7, Last: 7}, choice{prefer: -1}, nil, false)
	assert.True(t, ok)
	assert.Equal(t, int64(7), id, "unlisted: any id of the range may be free")
	seen := map[int64]bool{}
	for range 400 {
		id, _ := pick(FullRange, choice{prefer: -1}, nil, false)
		seen[id] = true
	}
	assert.Greater(t, len(seen), 200, "starters spread over the range instead of racing for the lowest id")
	id, ok = pick(r, choice{prefer: -1, skip: map[int64]bool{11: true}}, taken, true)
	assert.True(t, ok)
	assert.Equal(t, int64(13), id, "lowestFirst (tests): the lowest free id")
}

func TestParseRange(t *testing.T) {
	for in, want := range map[string]Range{"0-511": {First: 0, Last: 511}, " 512 - 1023 ": {First: 512, Last: 1023}, "7": {First: 7, Last: 7}} {
		r, err := ParseRange(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, r)
	}
	for _, in := range []string{"", "5-4", "0-1024", "-1-3", "a-b", "1-2-3", "0x1-2"} {
		_, err := ParseRange(in)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, in)
		if err != nil {
			assert.Contains(t, err.Error(), "machine range")
		}
	}
	assert.True(t, Range{First: 0, Last: 511}.Overlaps(Range{First: 511, Last: 600}))
	assert.False(t, Range{First: 0, Last: 511}.Overlaps(Range{First: 512, Last: 1023}))
}

func TestMachineOfKey(t *testing.T) {
	k := Keys{Prefix: "/vesta"}
	for key, want := range map[string]int64{"/vesta/machines/0": 0, "/vesta/machines/1023": 1023} {
		id, ok := k.machineOf(key)
		assert.True(t, ok, key)
		assert.Equal(t, want, id)
	}
	for _, key := range []string{"/vesta/machines/1024", "/vesta/machines/007", "/vesta/machines/x", "/vesta/marks/1", "/vesta/machines/-1"} {
		_, ok := k.machineOf(key)
		assert.False(t, ok, key)
	}
}

func TestFenceComesBeforeExpiry(t *testing.T) {
	for _, ttl := range []time.Duration{MinTTL, DefaultTTL, MaxTTL} {
		l := &Lease{o: Options{TTL: ttl}}
		v := l.validity(int64(ttl / time.Second))
		assert.Less(t, v, ttl, "fenced before etcd can expire the lease")
		assert.Greater(t, v, 2*RenewInterval(ttl), "two renewals may fail before the fence")
		assert.Less(t, l.validity(int64(ttl/time.Second)-1), v, "a shorter TTL granted shortens the validity")
	}
}

// The largest clock report taken leaves room for a report's age in
// nanoseconds: the skew arithmetic cannot overflow (a report past it, such
// as 9223372036854775807, is ignored as malformed).
func TestMaxReportFitsTheSkewArithmetic(t *testing.T) {
	hi := maxReportMs*int64(time.Millisecond) + int64(MaxTTL) + int64(MaxMaxClockSkew)
	assert.Greater(t, hi, maxReportMs*int64(time.Millisecond), "no overflow")
	now := int64(1_800_000_000) * int64(time.Second)
	assert.Less(t, medianSkew(now, []int64{maxReportMs}, time.Hour), time.Duration(0), "a report far ahead reads as this clock behind")
}
