package segment_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

func TestParseFormat(t *testing.T) {
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		format string
		group  segstore.Grouping
		seq    int64
		want   string
	}{
		{"ORD{yyyyMMdd}{seq:6}", segstore.GroupDay, 123, "ORD20261127000123"},
		{"{yy}-{MM}-{dd}/{seq}", segstore.GroupDay, 4567, "26-11-27/4567"},
		{"INV{yyyyMM}{seq:4}", segstore.GroupMonth, 1, "INV2026110001"},
		{"{seq:3}@{yyyy}", segstore.GroupYear, 42, "042@2026"},
		{"Y{yyyy}N{seq:18}", segstore.GroupYear, 999_999_999_999_999_999, "Y2026N999999999999999999"},
		{"{yyyyMMdd}{seq:1}", segstore.GroupDay, 9, "202611279"},
	} {
		f, err := segstore.ParseFormat(c.format, c.group)
		require.NoError(t, err, c.format)
		got, err := f.Render(day, c.seq)
		require.NoError(t, err, c.format)
		assert.Equal(t, c.want, got, c.format)
	}
}

func TestParseFormatRefuses(t *testing.T) {
	for _, c := range []struct {
		format string
		group  segstore.Grouping
		says   string
	}{
		{"", segstore.GroupDay, "empty"},
		{"ORD{yyyyMMdd}", segstore.GroupDay, "no {seq}"},
		{"{yyyyMMdd}{seq}{seq}", segstore.GroupDay, "once only"},
		{"{yyyyMMdd}{hh}{seq}", segstore.GroupDay, "unknown field {hh}"},
		{"{yyyyMMddx}{seq}", segstore.GroupDay, "unknown field {yyyyMMddx}"},
		{"{yyyyMMdd}{}{seq}", segstore.GroupDay, "empty {}"},
		{"{yyyyMMdd}{seq:0}", segstore.GroupDay, "width must be 1..18"},
		{"{yyyyMMdd}{seq:19}", segstore.GroupDay, "width must be 1..18"},
		{"{yyyyMMdd}{seq:x}", segstore.GroupDay, "width must be 1..18"},
		{"{yyyyMMdd}{seq", segstore.GroupDay, "never closed"},
		{"A}{yyyyMMdd}{seq}", segstore.GroupDay, "not allowed"},
		{"Ü{yyyyMMdd}{seq}", segstore.GroupDay, "not allowed"},
		{"{yyyyMMdd}{seq}", segstore.GroupMonth, "{dd} is finer than the group month"},
		{"{yyyyMM}{seq}", segstore.GroupYear, "{MM} is finer than the group year"},
		{"{MMdd}{seq}", segstore.GroupDay, "no year"},
		{"{yyyydd}{seq}", segstore.GroupDay, "no month"},
		{"{yyyyMM}{seq}", segstore.GroupDay, "no day"},
		{"{yyyy}{seq}", segstore.GroupMonth, "no month"},
		{"{yyyy}{seq}", "week", `group "week"`},
		{strings.Repeat("x", 130) + "{yyyy}{seq}", segstore.GroupYear, "at most 128"},
	} {
		_, err := segstore.ParseFormat(c.format, c.group)
		require.Error(t, err, c.format)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, c.format)
		assert.Contains(t, err.Error(), c.says, c.format)
	}
}

func TestFormatOverflowIsAnError(t *testing.T) {
	f, err := segstore.ParseFormat("{yyyy}{seq:2}", segstore.GroupYear)
	require.NoError(t, err)
	_, err = f.Render(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 100)
	assert.ErrorIs(t, err, segstore.ErrNumberOverflow)
	assert.Contains(t, err.Error(), "{seq:2}")
}

// Any format the parser accepts renders, for every grouping, texts whose
// periods and sequences can be told apart: two (period, seq) pairs never
// give one text.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"ORD{yyyyMMdd}{seq:6}", "{seq}{yyMMdd}", "{yyyy}-{seq:3}", "{MM}{yy}{dd}{seq}", "{{}}"} {
		f.Add(s, uint8(0), int64(7), int64(70))
	}
	groups := segstore.Groupings()
	f.Fuzz(func(t *testing.T, src string, gi uint8, a, b int64) {
		g := groups[int(gi)%len(groups)]
		fm, err := segstore.ParseFormat(src, g)
		if err != nil {
			if !errors.Is(err, intf.ErrInvalidArgument) {
				t.Fatalf("%q: %v does not match ErrInvalidArgument", src, err)
			}
			return
		}
		p1 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
		p2 := time.Date(2027, 12, 28, 0, 0, 0, 0, time.UTC)
		seen := map[string]string{}
		for _, p := range []time.Time{p1, p2} {
			for _, seq := range []int64{1, a, b, 10, 11, 101} {
				text, err := fm.Render(p, seq)
				if err != nil {
					if !errors.Is(err, segstore.ErrNumberOverflow) {
						t.Fatalf("%q: %v", src, err)
					}
					continue
				}
				who := fmt.Sprintf("%s/%d", g.Key(p), seq)
				if prev, dup := seen[text]; dup && prev != who {
					t.Fatalf("%q: %q written for %s and %s", src, text, prev, who)
				}
				seen[text] = who
			}
		}
	})
}
