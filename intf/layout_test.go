package intf_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// The expected integers in this file are written out with explicit shifts
// from REFERENCE's bit table, never computed with the code under test.

func TestLayoutFieldPositions(t *testing.T) {
	type want struct {
		name        string
		shift, bits uint
	}
	cases := []struct {
		typ    intf.IdType
		unit   time.Duration
		fields []want
	}{
		{intf.MaxPeak, time.Second, []want{
			{"machine", 0, 10}, {"seq", 10, 20}, {"time", 30, 30},
			{"genMethod", 60, 2}, {"type", 62, 1}, {"version", 63, 1},
		}},
		{intf.MinGranularity, time.Millisecond, []want{
			{"machine", 0, 10}, {"seq", 10, 10}, {"time", 20, 40},
			{"genMethod", 60, 2}, {"type", 62, 1}, {"version", 63, 1},
		}},
	}
	for _, c := range cases {
		t.Run(c.typ.String(), func(t *testing.T) {
			l, err := c.typ.Layout()
			require.NoError(t, err)
			assert.Equal(t, c.typ, l.Type)
			assert.Equal(t, c.unit, l.Unit)
			fs := l.Fields()
			require.Len(t, fs, len(c.fields))
			var covered uint64
			for i, w := range c.fields {
				assert.Equal(t, w.name, fs[i].Name)
				assert.Equal(t, w.shift, fs[i].Shift, w.name)
				assert.Equal(t, w.bits, fs[i].Bits, w.name)
				assert.Equal(t, int64(1)<<w.bits-1, fs[i].Max(), w.name)
				assert.Zero(t, covered&(uint64(fs[i].Max())<<fs[i].Shift), "%s overlaps a lower field", w.name)
				covered |= (uint64(fs[i].Max()) << fs[i].Shift)
			}
			assert.Equal(t, uint64(math.MaxUint64), covered, "the fields cover all 64 bits")
			// The named fields are the ones Fields lists.
			assert.Equal(t, []intf.Field{l.Machine, l.Seq, l.Time, l.GenMethod, l.TypeBit, l.Version}, fs)
		})
	}
}

// layoutCase is an ID written out from explicit shifts, and its fields.
type layoutCase struct {
	name string
	id   uint64
	want intf.IdFields
}

func layoutCases() []layoutCase {
	return []layoutCase{
		{
			name: "worked example max-peak",
			id:   uint64(78) | 498081<<10 | 371861805<<30 | 2<<60,
			want: intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2, Type: 0, Version: 0},
		},
		{
			name: "max-peak version 1",
			id:   uint64(1) | 2<<10 | 3<<30 | 1<<60 | 1<<63,
			want: intf.IdFields{Machine: 1, Seq: 2, Time: 3, GenMethod: 1, Type: 0, Version: 1},
		},
		{
			name: "max-peak all zero",
			id:   0,
			want: intf.IdFields{},
		},
		{
			name: "max-peak all ones",
			id:   uint64(1023) | (1<<20-1)<<10 | (1<<30-1)<<30 | 3<<60 | 0<<62 | 1<<63,
			want: intf.IdFields{Machine: 1023, Seq: 1<<20 - 1, Time: 1<<30 - 1, GenMethod: 3, Type: 0, Version: 1},
		},
		{
			name: "min-granularity",
			id:   uint64(5) | 1000<<10 | 123456789012<<20 | 1<<60 | 1<<62,
			want: intf.IdFields{Machine: 5, Seq: 1000, Time: 123456789012, GenMethod: 1, Type: 1, Version: 0},
		},
		{
			name: "min-granularity version 1",
			id:   uint64(1023) | 7<<10 | 371861805123<<20 | 3<<60 | 1<<62 | 1<<63,
			want: intf.IdFields{Machine: 1023, Seq: 7, Time: 371861805123, GenMethod: 3, Type: 1, Version: 1},
		},
		{
			name: "min-granularity all zero",
			id:   uint64(1) << 62,
			want: intf.IdFields{Type: 1},
		},
		{
			name: "min-granularity all ones",
			id:   uint64(1023) | (1<<10-1)<<10 | (1<<40-1)<<20 | 3<<60 | 1<<62 | 1<<63,
			want: intf.IdFields{Machine: 1023, Seq: 1<<10 - 1, Time: 1<<40 - 1, GenMethod: 3, Type: 1, Version: 1},
		},
	}
}

func TestLayoutDecodesHandComputedIds(t *testing.T) {
	for _, c := range layoutCases() {
		t.Run(c.name, func(t *testing.T) {
			id := intf.Id(c.id)
			_, l := intf.Decode(id)
			assert.Equal(t, intf.IdType(c.want.Type), l.Type)
			assert.Equal(t, c.want.Type, id.Fields().Type)
			got := intf.IdFields{
				Machine:   l.Machine.Get(c.id),
				Seq:       l.Seq.Get(c.id),
				Time:      l.Time.Get(c.id),
				GenMethod: l.GenMethod.Get(c.id),
				Type:      l.TypeBit.Get(c.id),
				Version:   l.Version.Get(c.id),
			}
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.want.Version == 1, id < 0, "version 1 IDs are negative int64s")
		})
	}
}

func TestWorkedExample(t *testing.T) {
	// REFERENCE §1: max-peak, version 0, genMethod 2, time 371861805,
	// seq 498081, machine 78.
	id := uint64(78) | 498081<<10 | 371861805<<30 | 2<<60
	assert.Equal(t, uint64(2705126582500361294), id)
	_, l := intf.Decode(intf.Id(id))
	assert.Equal(t, intf.MaxPeak, l.Type)
	assert.Equal(t, int64(371861805), l.Time.Get(id))
	assert.Equal(t, int64(498081), l.Seq.Get(id))
}

func TestTypeBit(t *testing.T) {
	typeOf := func(id intf.Id) intf.IdType { _, l := intf.Decode(id); return l.Type }
	assert.Equal(t, intf.MaxPeak, typeOf(0))
	assert.Equal(t, intf.MinGranularity, typeOf(1<<62))
	assert.Equal(t, intf.MaxPeak, typeOf(math.MinInt64), "bit 63 alone is the version, not the type")
	assert.Equal(t, intf.MinGranularity, typeOf(-1))
	assert.Equal(t, intf.MaxPeak, typeOf(math.MaxInt64>>1), "bits 0-61 say nothing about the type")
	// The type bit decides the layout: the same low bits decode differently.
	id := intf.Id(uint64(1)<<62 | 1<<20)
	assert.Equal(t, int64(1), id.Fields().Time)
	assert.Equal(t, int64(0), id.Fields().Seq)
	id = intf.Id(1 << 20)
	assert.Equal(t, int64(0), id.Fields().Time)
	assert.Equal(t, int64(1<<10), id.Fields().Seq)
}

func TestIdTypeString(t *testing.T) {
	assert.Equal(t, "max-peak", intf.MaxPeak.String())
	assert.Equal(t, "min-granularity", intf.MinGranularity.String())
	assert.Equal(t, "IdType(2)", intf.IdType(2).String())
	assert.Equal(t, "IdType(-1)", intf.IdType(-1).String())
	for _, typ := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
		_, err := typ.Layout()
		assert.NoError(t, err)
	}
	for _, typ := range []intf.IdType{2, -1} {
		_, err := typ.Layout()
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	}
}

func TestParseIdType(t *testing.T) {
	good := map[string]intf.IdType{
		"max-peak": intf.MaxPeak, "MAX-PEAK": intf.MaxPeak, "max_peak": intf.MaxPeak, "maxpeak": intf.MaxPeak,
		" 0 ": intf.MaxPeak, "0": intf.MaxPeak,
		"min-granularity": intf.MinGranularity, "Min_Granularity": intf.MinGranularity,
		"mingranularity": intf.MinGranularity, "1": intf.MinGranularity,
	}
	for s, want := range good {
		got, err := intf.ParseIdType(s)
		if assert.NoError(t, err, s) {
			assert.Equal(t, want, got, s)
		}
	}
	// String and ParseIdType round-trip.
	for _, typ := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
		got, err := intf.ParseIdType(typ.String())
		require.NoError(t, err)
		assert.Equal(t, typ, got)
	}
	for _, s := range []string{"", "2", "-1", "max", "peak", "max-peak!", "IdType(2)", "01"} {
		_, err := intf.ParseIdType(s)
		if assert.Error(t, err, "%q", s) {
			assert.ErrorIs(t, err, intf.ErrInvalidArgument, "%q", s)
			assert.Contains(t, err.Error(), "type", "%q", s)
		}
	}
}

func TestLayoutOfInvalidType(t *testing.T) {
	for _, typ := range []intf.IdType{2, -1, 100} {
		l, err := typ.Layout()
		require.Error(t, err)
		assert.Equal(t, intf.Layout{}, l)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "type", fe.Field)
		assert.Equal(t, int64(typ), fe.Value)
		assert.Equal(t, int64(0), fe.Min)
		assert.Equal(t, int64(1), fe.Max)
	}
}

func TestFieldError(t *testing.T) {
	err := intf.CheckRange("machine", 1024, 0, 1023)
	require.Error(t, err)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.NotErrorIs(t, err, intf.ErrTimeOverflow)
	assert.EqualError(t, err, "invalid argument: machine 1024 out of range 0..1023")

	// Wrapped, it still matches both ways.
	wrapped := errors.Join(errors.New("context"), err)
	assert.ErrorIs(t, wrapped, intf.ErrInvalidArgument)
	var fe *intf.FieldError
	require.ErrorAs(t, wrapped, &fe)
	assert.Equal(t, intf.FieldError{Field: "machine", Value: 1024, Min: 0, Max: 1023}, *fe)

	assert.Error(t, intf.CheckRange("seq", -1, 0, 10))
	assert.NoError(t, intf.CheckRange("seq", 0, 0, 10))
	assert.NoError(t, intf.CheckRange("seq", 10, 0, 10))
	assert.Error(t, intf.CheckRange("seq", 11, 0, 10))
	assert.Error(t, intf.CheckRange("x", math.MinInt64, 0, 10))
	assert.Error(t, intf.CheckRange("x", math.MaxInt64, 0, 10))
}

func TestSentinelErrorsAreDistinct(t *testing.T) {
	all := []error{intf.ErrInvalidArgument, intf.ErrTimeOverflow, intf.ErrClockBehind,
		intf.ErrNotPersisted, intf.ErrClosed, intf.ErrUnavailable}
	for i, a := range all {
		assert.NotEmpty(t, a.Error())
		for j, b := range all {
			assert.Equal(t, i == j, errors.Is(a, b), "%v vs %v", a, b)
		}
	}
}

func TestConstants(t *testing.T) {
	assert.Equal(t, 1023, intf.MaxMachine)
	assert.Equal(t, 3, intf.MaxGenMethod)
	assert.Equal(t, 1, intf.MaxVersion)
	assert.Equal(t, 100_000, intf.MaxBatch)
	// 2015-01-01T00:00:00+08:00.
	epoch := time.Date(2015, 1, 1, 0, 0, 0, 0, time.FixedZone("CST", 8*3600))
	assert.Equal(t, epoch.UnixMilli(), intf.DefaultEpochMillis)
	assert.Equal(t, time.Date(2014, 12, 31, 16, 0, 0, 0, time.UTC), time.UnixMilli(intf.DefaultEpochMillis).UTC())
}

func TestLifetimeEnds(t *testing.T) {
	// REFERENCE: the 30-bit second field runs out on 2049-01-09, the
	// 40-bit millisecond field on 2049-11-03 (UTC dates).
	mp, err := intf.MaxPeak.Layout()
	require.NoError(t, err)
	end := time.UnixMilli(intf.DefaultEpochMillis).Add(time.Duration(mp.Time.Max()+1) * mp.Unit).UTC()
	assert.Equal(t, "2049-01-09", end.Format(time.DateOnly))
	mg, err := intf.MinGranularity.Layout()
	require.NoError(t, err)
	end = time.UnixMilli(intf.DefaultEpochMillis).Add(time.Duration(mg.Time.Max()+1) * mg.Unit).UTC()
	assert.Equal(t, "2049-11-03", end.Format(time.DateOnly))
}
