package intf_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// randomIds are n IDs of both types and both signs (version 0 and 1),
// with random fields, and the edges of the 64 bits.
func randomIds(t testing.TB, n int, seed uint64) []intf.Id {
	r := rand.New(rand.NewPCG(seed, seed+1))
	ids := []intf.Id{0, 1, math.MaxInt64, math.MinInt64, -1}
	for len(ids) < n {
		typ := intf.IdType(r.IntN(2))
		l, err := typ.Layout()
		require.NoError(t, err)
		f := intf.IdFields{Type: int64(typ), Machine: r.Int64N(l.Machine.Max() + 1), Seq: r.Int64N(l.Seq.Max() + 1),
			Time: r.Int64N(l.Time.Max() + 1), GenMethod: r.Int64N(l.GenMethod.Max() + 1), Version: r.Int64N(2)}
		id, _, err := intf.Encode(f)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

// Every form reads back to the same ID, for random IDs of both types and
// both signs.
func TestFormsRoundTrip(t *testing.T) {
	for _, id := range randomIds(t, 20_000, 1) {
		for _, f := range intf.Forms {
			s := id.Format(f)
			got, err := intf.ParseIdAs(s, f)
			require.NoError(t, err, "%s of %d: %q", f, id, s)
			require.Equal(t, id, got, "%s of %d: %q", f, id, s)
		}
		require.Len(t, id.Format(intf.FormSortable), 11)
		at, err := intf.ParseFriendlyAt(id.FriendlyAt(1_000_000_500), 1_000_000_500) // an epoch off whole seconds
		require.NoError(t, err)
		require.Equal(t, id, at)
	}
}

// The forms of one known ID, as docs/id-layout.md lists them (computed
// apart, in Python); base 36
// reads in either case, and a decimal string is also valid base 62.
func TestFormsOfOneId(t *testing.T) {
	id := intf.Id(2705126582500361294)
	want := map[intf.Form]string{
		intf.FormDec: "2705126582500361294", intf.FormBase62: "3DpVWTCF2ju", intf.FormBase58: "7HCPhEfmNJZ",
		intf.FormBase36: "kjvrcc2y4cwe", intf.FormSortable: "3DpVWTCF2ju", intf.FormFriendly: "2026-10-13T14:56:45Z_m78_s498081_g2",
	}
	for f, s := range want {
		assert.Equal(t, s, id.Format(f), "%s", f)
	}
	assert.Equal(t, "0000000000A", intf.Id(10).Format(intf.FormSortable))
	up, err := intf.ParseIdAs(strings.ToUpper(id.Format(intf.FormBase36)), intf.FormBase36)
	require.NoError(t, err)
	assert.Equal(t, id, up)
	dec, err := intf.ParseIdAs("12345", intf.FormBase62)
	require.NoError(t, err)
	assert.Equal(t, intf.Id(1*62*62*62*62+2*62*62*62+3*62*62+4*62+5), dec)
	ms := intf.Id(-2)
	assert.Equal(t, "LygHa16AHYE", ms.Format(intf.FormBase62), "the unsigned value: 2^64-2")
}

// Bytewise order of the sortable form is the unsigned order of the IDs,
// over a million random ones.
func TestSortableOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ids := make([]uint64, 1_000_000)
	for i := range ids {
		ids[i] = r.Uint64() >> r.UintN(64) // all magnitudes
	}
	strs := make([]string, len(ids))
	for i, u := range ids {
		strs[i] = intf.Id(u).Format(intf.FormSortable)
	}
	slices.Sort(ids)
	slices.SortFunc(strs, func(a, b string) int { return bytes.Compare([]byte(a), []byte(b)) })
	for i, u := range ids {
		if intf.Id(u).Format(intf.FormSortable) != strs[i] {
			t.Fatalf("position %d: sorted string %q, sorted value %d (%q)", i, strs[i], u, intf.Id(u).Format(intf.FormSortable))
		}
	}
}

// What is not an ID in the form named is an error naming the form and
// quoting the input: never a panic, never another ID.
func TestFormsRefuse(t *testing.T) {
	for _, c := range []struct {
		f    intf.Form
		in   string
		want string
	}{
		{intf.FormBase62, "", "is not base62"},
		{intf.FormBase62, "abc-", "'-' at 3 is not a base 62 digit"},
		{intf.FormBase62, "LygHa16AHYG", "value out of range"}, // 2^64+1
		{intf.FormBase58, "0OIl", "is not a base 58 digit"},
		{intf.FormBase36, "3w5e11264sgsg", "value out of range"},
		{intf.FormSortable, "3DdNjAbvx0", "want 11 characters, got 10"},
		{intf.FormSortable, "zzzzzzzzzzz", "value out of range"},
		{intf.FormDec, "12a", "invalid syntax"},
		{intf.FormFriendly, "2026-11-27T19:58:11Z_m17", "want a time and _m, _s"},
		{intf.FormFriendly, "2026-11-27T19:58:11Z_m17_s1_x1", "unknown or repeated field"},
		{intf.FormFriendly, "2026-11-27T19:58:11Z_m17_m1_s1", "unknown or repeated field"},
		{intf.FormFriendly, "2026-11-27T19:58:11Z_m1024_s1", "machine 1024 out of range"},
		{intf.FormFriendly, "2026-11-27T19:58:11.1Z_m1_s1", "not in the form this ID is written"},
		{intf.FormFriendly, "2026-11-27T19:58:11Z_s1_m1", "not in the form this ID is written"},
		{intf.FormFriendly, "1999-01-01T00:00:00Z_m1_s1", "time -"},
		{intf.Form("hex"), "1", `format "hex"`},
	} {
		_, err := intf.ParseIdAs(c.in, c.f)
		require.Error(t, err, "%s %q", c.f, c.in)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		assert.Contains(t, err.Error(), c.want, "%s %q", c.f, c.in)
	}
	_, err := intf.ParseIdAs("LygHa16AHYG", intf.FormBase62)
	assert.True(t, errors.Is(err, strconv.ErrRange))
	_, err = intf.ParseForm("friendly")
	assert.NoError(t, err)
}
