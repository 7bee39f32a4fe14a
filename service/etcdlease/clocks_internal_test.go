package etcdlease

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/vesta-go/vesta/internal/leasekit"
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
			var reports []clockReport
			for _, ms := range tc.reports {
				reports = append(reports, clockReport{ms: ms})
			}
			assert.Equal(t, tc.want, medianSkew(now, reports, age))
		})
	}
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

// The largest clock report taken leaves room for a report's age in
// nanoseconds: the skew arithmetic cannot overflow (a report past it, such
// as 9223372036854775807, is ignored as malformed).
func TestMaxReportFitsTheSkewArithmetic(t *testing.T) {
	hi := maxReportMs*int64(time.Millisecond) + int64(leasekit.MaxTTL) + int64(leasekit.MaxMaxClockSkew)
	assert.Greater(t, hi, maxReportMs*int64(time.Millisecond), "no overflow")
	now := int64(1_800_000_000) * int64(time.Second)
	assert.Less(t, medianSkew(now, []clockReport{{ms: maxReportMs}}, time.Hour), time.Duration(0), "a report far ahead reads as this clock behind")
}
