package service_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// The expected IDs are written with explicit shifts from REFERENCE's table.
var handIds = []struct {
	name string
	id   uint64
	f    intf.IdFields
}{
	{"worked example", uint64(78) | 498081<<10 | 371861805<<30 | 2<<60,
		intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2}},
	{"max-peak zero", 0, intf.IdFields{}},
	{"max-peak ones", uint64(1023) | (1<<20-1)<<10 | (1<<30-1)<<30 | 3<<60 | 1<<63,
		intf.IdFields{Machine: 1023, Seq: 1<<20 - 1, Time: 1<<30 - 1, GenMethod: 3, Version: 1}},
	{"max-peak version 1", uint64(9) | 8<<10 | 7<<30 | 1<<63,
		intf.IdFields{Machine: 9, Seq: 8, Time: 7, Version: 1}},
	{"min-granularity", uint64(5) | 1000<<10 | 123456789012<<20 | 1<<60 | 1<<62,
		intf.IdFields{Machine: 5, Seq: 1000, Time: 123456789012, GenMethod: 1, Type: 1}},
	{"min-granularity zero", uint64(1) << 62, intf.IdFields{Type: 1}},
	{"min-granularity ones", uint64(1023) | (1<<10-1)<<10 | (1<<40-1)<<20 | 3<<60 | 1<<62 | 1<<63,
		intf.IdFields{Machine: 1023, Seq: 1023, Time: 1<<40 - 1, GenMethod: 3, Type: 1, Version: 1}},
	{"min-granularity version 1", uint64(1) | 2<<10 | 3<<20 | 1<<62 | 1<<63,
		intf.IdFields{Machine: 1, Seq: 2, Time: 3, Type: 1, Version: 1}},
}

func TestMakeIdAndExpIdHandComputed(t *testing.T) {
	// A max-peak service with other settings, so every field must come
	// from the request, and a min-granularity one: both decode every ID
	// by the ID's own type bit.
	mp := newSvc(t, service.Settings{Machine: 1, GenMethod: 1, Version: 0})
	mg := newSvc(t, service.Settings{Machine: 2, GenMethod: 0, Version: 1, Type: intf.MinGranularity})
	for _, c := range handIds {
		t.Run(c.name, func(t *testing.T) {
			want := intf.Id(c.id)
			assert.Equal(t, c.f.Version == 1, want < 0, "version 1 is a negative int64")
			for _, svc := range []*service.Service{mp, mg} {
				got, err := svc.MakeId(bg, intf.FromFields(c.f))
				require.NoError(t, err)
				assert.Equal(t, want, got, "MakeId(%v)", c.f)
				f, err := svc.ExpId(bg, want)
				require.NoError(t, err)
				assert.Equal(t, c.f, f, "ExpId(%d)", want)
			}
		})
	}
}

func TestWorkedExampleId(t *testing.T) {
	svc := newSvc(t, service.Settings{Machine: 78, GenMethod: 2})
	id, err := svc.MakeId(bg, intf.MakeIdRequest{Time: 371861805, Seq: 498081})
	require.NoError(t, err)
	assert.Equal(t, intf.Id(2705126582500361294), id)
	assert.Equal(t, intf.Id(uint64(78)|498081<<10|371861805<<30|2<<60), id)
	f, err := svc.ExpId(bg, 2705126582500361294)
	require.NoError(t, err)
	assert.Equal(t, intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2, Type: 0, Version: 0}, f)
}

func TestExpIdDecodesByTheIdsTypeBit(t *testing.T) {
	// A max-peak service given a min-granularity ID decodes it with the
	// min-granularity layout, and the other way round.
	mp := newSvc(t, service.Settings{})
	mg := newSvc(t, service.Settings{Type: intf.MinGranularity})
	minId := intf.Id(uint64(7) | 1023<<10 | 987654321<<20 | 1<<62)
	maxId := intf.Id(uint64(7) | 1048575<<10 | 987654321<<30)
	for _, svc := range []*service.Service{mp, mg} {
		f, err := svc.ExpId(bg, minId)
		require.NoError(t, err)
		assert.Equal(t, intf.IdFields{Machine: 7, Seq: 1023, Time: 987654321, Type: 1}, f)
		f, err = svc.ExpId(bg, maxId)
		require.NoError(t, err)
		assert.Equal(t, intf.IdFields{Machine: 7, Seq: 1048575, Time: 987654321, Type: 0}, f)
	}
}

func TestExpIdOfGeneratedId(t *testing.T) {
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			clk := newFakeClock(testStart)
			svc := newSvc(t, service.Settings{Machine: 513, GenMethod: 3, Version: 1, Type: typ, Clock: clk})
			id, err := svc.GenId(bg)
			require.NoError(t, err)
			f, err := svc.ExpId(bg, id)
			require.NoError(t, err)
			l := layoutOf(t, typ)
			wantTime := (testStart.UnixMilli() - intf.DefaultEpochMillis) / l.Unit.Milliseconds()
			assert.Equal(t, intf.IdFields{Machine: 513, Seq: 0, Time: wantTime, GenMethod: 3, Type: int64(typ), Version: 1}, f)
			assert.Less(t, id, int64(0), "version 1")
			tm, err := svc.TransTime(bg, f.Time, typ)
			require.NoError(t, err)
			assert.Equal(t, testStart.UTC(), tm)
		})
	}
}

// fieldLimits are the valid ranges of MakeId's fields per type.
func fieldLimits(typ intf.IdType) map[string]int64 {
	if typ == intf.MaxPeak {
		return map[string]int64{"machine": 1023, "seq": 1<<20 - 1, "time": 1<<30 - 1, "genMethod": 3, "type": 1, "version": 1}
	}
	return map[string]int64{"machine": 1023, "seq": 1<<10 - 1, "time": 1<<40 - 1, "genMethod": 3, "type": 1, "version": 1}
}

// request builds a six-field request with field set to v and the others
// at a valid value.
func request(typ intf.IdType, field string, v int64) intf.MakeIdRequest {
	id := intf.IdFields{Machine: 1, Seq: 2, Time: 3, GenMethod: 1, Type: int64(typ), Version: 0}
	switch field {
	case "machine":
		id.Machine = v
	case "seq":
		id.Seq = v
	case "time":
		id.Time = v
	case "genMethod":
		id.GenMethod = v
	case "type":
		id.Type = v
	case "version":
		id.Version = v
	default:
		panic(field)
	}
	return intf.FromFields(id)
}

func TestMakeIdFieldRanges(t *testing.T) {
	svc := newSvc(t, service.Settings{})
	for _, typ := range bothTypes {
		for field, max := range fieldLimits(typ) {
			t.Run(fmt.Sprintf("%s/%s", typ, field), func(t *testing.T) {
				// type is the one field whose valid max changes the layout.
				okTyp := typ
				if field == "type" {
					okTyp = intf.IdType(max)
				}
				id, err := svc.MakeId(bg, request(typ, field, max))
				require.NoError(t, err, "%s at its max %d", field, max)
				f, err := svc.ExpId(bg, id)
				require.NoError(t, err)
				assert.Equal(t, int64(okTyp), f.Type)
				got := map[string]int64{"machine": f.Machine, "seq": f.Seq, "time": f.Time,
					"genMethod": f.GenMethod, "type": f.Type, "version": f.Version}
				assert.Equal(t, max, got[field], "the field comes back at its max")

				_, err = svc.MakeId(bg, request(typ, field, 0))
				require.NoError(t, err, "%s at 0", field)

				for _, bad := range []int64{max + 1, -1, math.MaxInt64, math.MinInt64} {
					_, err := svc.MakeId(bg, request(typ, field, bad))
					require.Error(t, err, "%s = %d", field, bad)
					assert.ErrorIs(t, err, intf.ErrInvalidArgument)
					var fe *intf.FieldError
					require.ErrorAs(t, err, &fe)
					assert.Equal(t, field, fe.Field)
					assert.Equal(t, bad, fe.Value)
					assert.Equal(t, int64(0), fe.Min)
					if field != "type" {
						assert.Equal(t, max, fe.Max)
					}
					assert.Contains(t, err.Error(), field)
				}
			})
		}
	}
}

func TestMakeIdSeqOfMaxPeakTooWideForMinGranularity(t *testing.T) {
	// A max-peak seq is a valid field of max-peak but not of
	// min-granularity: the layout chosen by the type decides the range.
	svc := newSvc(t, service.Settings{})
	_, err := svc.MakeId(bg, intf.MakeIdRequest{Time: 1, Seq: 1024}.WithType(0))
	require.NoError(t, err)
	_, err = svc.MakeId(bg, intf.MakeIdRequest{Time: 1, Seq: 1024}.WithType(1))
	var fe *intf.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, intf.FieldError{Field: "seq", Value: 1024, Min: 0, Max: 1023}, *fe)
	_, err = svc.MakeId(bg, intf.MakeIdRequest{Time: 1 << 30, Seq: 0}.WithType(0))
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "time", fe.Field)
	_, err = svc.MakeId(bg, intf.MakeIdRequest{Time: 1 << 30, Seq: 0}.WithType(1))
	require.NoError(t, err)
}

func TestMakeIdOmittedFieldsComeFromSettings(t *testing.T) {
	for _, typ := range bothTypes {
		t.Run(typ.String(), func(t *testing.T) {
			svc := newSvc(t, service.Settings{Machine: 78, GenMethod: 2, Version: 1, Type: typ})
			tb := uint(30)
			if typ == intf.MinGranularity {
				tb = 20
			}
			base := uint64(typ)<<62 | 1<<63
			cases := []struct {
				name string
				req  intf.MakeIdRequest
				want uint64
			}{
				// makeId(time, seq): machine, genMethod, type, version from the settings.
				{"time,seq", intf.MakeIdRequest{Time: 300, Seq: 5},
					base | 78 | 5<<10 | 300<<tb | 2<<60},
				// makeId(time, seq, machine).
				{"time,seq,machine", intf.MakeIdRequest{Time: 300, Seq: 5}.WithMachine(3),
					base | 3 | 5<<10 | 300<<tb | 2<<60},
				// makeId(genMethod, time, seq, machine).
				{"genMethod,time,seq,machine", intf.MakeIdRequest{Time: 300, Seq: 5}.WithMachine(3).WithGenMethod(1),
					base | 3 | 5<<10 | 300<<tb | 1<<60},
				// Only genMethod given: machine still from the settings.
				{"genMethod only", intf.MakeIdRequest{Time: 300, Seq: 5}.WithGenMethod(0),
					base | 78 | 5<<10 | 300<<tb},
				// Only version given.
				{"version only", intf.MakeIdRequest{Time: 300, Seq: 5}.WithVersion(0),
					uint64(typ)<<62 | 78 | 5<<10 | 300<<tb | 2<<60},
				// Machine 0 given explicitly is 0, not "omitted".
				{"machine 0", intf.MakeIdRequest{Time: 300, Seq: 5}.WithMachine(0),
					base | 5<<10 | 300<<tb | 2<<60},
			}
			for _, c := range cases {
				got, err := svc.MakeId(bg, c.req)
				require.NoError(t, err, c.name)
				assert.Equal(t, intf.Id(c.want), got, c.name)
			}
			// The other type given explicitly switches the layout.
			other := 1 - typ
			ob := uint(30)
			if other == intf.MinGranularity {
				ob = 20
			}
			got, err := svc.MakeId(bg, intf.MakeIdRequest{Time: 300, Seq: 5}.WithType(int64(other)))
			require.NoError(t, err)
			assert.Equal(t, intf.Id(uint64(other)<<62|1<<63|78|5<<10|300<<ob|2<<60), got)
			// The full six-field form.
			got, err = svc.MakeId(bg, intf.FromFields(intf.IdFields{Machine: 4, Seq: 6, Time: 9, GenMethod: 3, Type: int64(other), Version: 0}))
			require.NoError(t, err)
			assert.Equal(t, intf.Id(uint64(other)<<62|4|6<<10|9<<ob|3<<60), got)
		})
	}
}

func TestTransTime(t *testing.T) {
	svc := newSvc(t, service.Settings{})
	epoch := time.Date(2014, 12, 31, 16, 0, 0, 0, time.UTC)
	cases := []struct {
		field int64
		typ   intf.IdType
		want  time.Time
	}{
		{0, intf.MaxPeak, epoch},
		{0, intf.MinGranularity, epoch},
		{1, intf.MaxPeak, epoch.Add(time.Second)},
		{1, intf.MinGranularity, epoch.Add(time.Millisecond)},
		// computed independently: datetime(2014,12,31,16) + timedelta(seconds=371861805)
		{371861805, intf.MaxPeak, time.Date(2026, 10, 13, 14, 56, 45, 0, time.UTC)},
		{86_400_000, intf.MinGranularity, time.Date(2015, 1, 1, 16, 0, 0, 0, time.UTC)},
		{1<<30 - 1, intf.MaxPeak, epoch.Add((1<<30 - 1) * time.Second)},
		{1<<40 - 1, intf.MinGranularity, epoch.Add((1<<40 - 1) * time.Millisecond)},
	}
	for _, c := range cases {
		got, err := svc.TransTime(bg, c.field, c.typ)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%d %s", c.field, c.typ)
		assert.Equal(t, time.UTC, got.Location())
	}
	for _, c := range []struct {
		field int64
		typ   intf.IdType
	}{{-1, intf.MaxPeak}, {1 << 30, intf.MaxPeak}, {-1, intf.MinGranularity}, {1 << 40, intf.MinGranularity}, {math.MaxInt64, intf.MinGranularity}} {
		_, err := svc.TransTime(bg, c.field, c.typ)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, "%d %s", c.field, c.typ)
		assert.Equal(t, "time", fe.Field)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	}
	for _, typ := range []intf.IdType{2, -1} {
		_, err := svc.TransTime(bg, 0, typ)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "type", fe.Field)
	}
}

func TestTransTimeHonorsEpoch(t *testing.T) {
	epoch := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := newSvc(t, service.Settings{EpochMillis: epoch.UnixMilli()})
	got, err := svc.TransTime(bg, 60, intf.MaxPeak)
	require.NoError(t, err)
	assert.Equal(t, epoch.Add(time.Minute), got)
}

func TestExpIdEveryBitPattern(t *testing.T) {
	// Every int64 is some ID: ExpId never fails, and MakeId of its fields
	// gives it back.
	svc := newSvc(t, service.Settings{})
	for _, id := range []intf.Id{0, -1, math.MinInt64, math.MaxInt64, 1 << 62, 2705126582500361294, -2705126582500361294} {
		f, err := svc.ExpId(bg, id)
		require.NoError(t, err)
		back, err := svc.MakeId(bg, intf.FromFields(f))
		require.NoError(t, err)
		assert.Equal(t, id, back, "%d", id)
	}
}
