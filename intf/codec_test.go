package intf_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// REFERENCE's worked example, with explicit shifts.
func TestEncodeDecodeWorkedExample(t *testing.T) {
	want := intf.Id(78 | 498081<<10 | 371861805<<30 | 2<<60)
	require.Equal(t, intf.Id(2705126582500361294), want)
	f := intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2}
	id, el, err := intf.Encode(f)
	require.NoError(t, err)
	assert.Equal(t, want, id)
	assert.Equal(t, mustLayout(t, intf.MaxPeak), el, "the layout f.Type names")
	got, l := intf.Decode(id)
	assert.Equal(t, f, got)
	assert.Equal(t, mustLayout(t, intf.MaxPeak), l, "the layout its type bit names")
}

func mustLayout(t *testing.T, typ intf.IdType) intf.Layout {
	t.Helper()
	l, err := typ.Layout()
	require.NoError(t, err)
	return l
}

// Every field at its maximum, and random values, round-trip in both
// layouts; version 1 makes the ID negative, as Java's long.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
		l := mustLayout(t, typ)
		top := intf.IdFields{Machine: l.Machine.Max(), Seq: l.Seq.Max(), Time: l.Time.Max(), GenMethod: 3, Type: int64(typ), Version: 1}
		id, _, err := intf.Encode(top)
		require.NoError(t, err)
		assert.Less(t, id, intf.Id(0))
		got, gl := intf.Decode(id)
		assert.Equal(t, top, got)
		assert.Equal(t, l, gl)
		for range 1000 {
			f := intf.IdFields{Machine: r.Int64N(l.Machine.Max() + 1), Seq: r.Int64N(l.Seq.Max() + 1),
				Time: r.Int64N(l.Time.Max() + 1), GenMethod: r.Int64N(4), Type: int64(typ), Version: r.Int64N(2)}
			id, el, err := intf.Encode(f)
			require.NoError(t, err)
			got, gl := intf.Decode(id)
			require.Equal(t, f, got)
			require.Equal(t, el, gl, "Encode and Decode name the same layout")
			back, _, err := intf.Encode(got)
			require.NoError(t, err)
			require.Equal(t, id, back)
		}
	}
}

// A field out of range is refused by name, never masked.
func TestEncodeRefusesOutOfRange(t *testing.T) {
	for field, f := range map[string]intf.IdFields{
		"machine":   {Machine: 1024, Type: 1},
		"seq":       {Seq: 1024, Type: 1},
		"time":      {Time: 1 << 40, Type: 1},
		"genMethod": {GenMethod: 4, Type: 1},
		"version":   {Version: -1, Type: 1},
		"type":      {Type: 2},
	} {
		_, _, err := intf.Encode(f)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, field)
		assert.Equal(t, field, fe.Field)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	}
	_, _, err := intf.Encode(intf.IdFields{Type: -1})
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
}

func TestTimestamp(t *testing.T) {
	assert.Equal(t, time.Date(2026, 10, 13, 14, 56, 45, 0, time.UTC),
		intf.Id(2705126582500361294).Time(intf.DefaultEpochMillis))
	mg, _, err := intf.Encode(intf.IdFields{Time: 1500, Type: 1})
	require.NoError(t, err)
	assert.Equal(t, time.UnixMilli(intf.DefaultEpochMillis+1500).UTC(), mg.Time(intf.DefaultEpochMillis))
	assert.Equal(t, time.UnixMilli(1500).UTC(), mg.Time(0))
	l, _ := intf.MaxPeak.Layout()
	assert.Equal(t, time.UnixMilli(intf.DefaultEpochMillis+7000).UTC(), l.Instant(intf.DefaultEpochMillis, 7))
}

// Put places a value in its field, never beyond it; Get reads it back.
func TestFieldPutGet(t *testing.T) {
	for _, typ := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
		l, _ := typ.Layout()
		for _, f := range []intf.Field{l.Machine, l.Seq, l.Time, l.GenMethod, l.TypeBit, l.Version} {
			assert.Equal(t, f.Max(), f.Get(f.Put(f.Max())), "%s: the largest value", f.Name)
			assert.Equal(t, (uint64(f.Max()) << f.Shift), f.Put(-1), "%s: a value too wide is cut to the field", f.Name)
			assert.Zero(t, f.Put(f.Max()+1)&^(uint64(f.Max())<<f.Shift), "%s: nothing spills into a neighbour", f.Name)
		}
	}
}

// Decode needs no service: any ID says how to read it.
func ExampleDecode() {
	f, l := intf.Decode(2705126582500361294)
	fmt.Println(f)
	fmt.Println(l.Instant(intf.DefaultEpochMillis, f.Time))
	fmt.Println(l.Unit) // max-peak: the time field counts seconds
	// Encode builds a neighbour: the next sequence number.
	f.Seq++
	next, _, err := intf.Encode(f)
	fmt.Println(next, err)
	// Output:
	// {machine:78 seq:498081 time:371861805 genMethod:2 type:0 version:0}
	// 2026-10-13 14:56:45 +0000 UTC
	// 1s
	// 2705126582500362318 <nil>
}

// Encode checks every field against the widths of the layout its type
// names.
func ExampleEncode() {
	id, l, err := intf.Encode(intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: intf.GenMethodREST})
	fmt.Println(id, l.Type, err)
	_, _, err = intf.Encode(intf.IdFields{Machine: 1024})
	fmt.Println(err)
	// Output:
	// 2705126582500361294 max-peak <nil>
	// invalid argument: machine 1024 out of range 0..1023
}
