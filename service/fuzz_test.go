package service_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// FuzzMakeExpRoundTrip checks MakeId and ExpId against each other:
//   - fields reduced into range (modulo the field widths) make an ID that
//     ExpId splits back into exactly those fields;
//   - the raw fields, when any is out of range, make a *intf.FieldError
//     naming one of the out-of-range fields, and never an ID;
//   - any 64-bit pattern is an ID: ExpId splits it, and MakeId of the
//     parts gives it back.
func FuzzMakeExpRoundTrip(f *testing.F) {
	// Seeds: typ, version, genMethod, time, seq, machine, raw.
	f.Add(uint8(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0))
	f.Add(uint8(1), int64(0), int64(0), int64(0), int64(0), int64(0), int64(1)<<62)
	// The worked example.
	f.Add(uint8(0), int64(0), int64(2), int64(371861805), int64(498081), int64(78), int64(2705126582500361294))
	// Every field at its max, both types.
	f.Add(uint8(0), int64(1), int64(3), int64(1<<30-1), int64(1<<20-1), int64(1023), int64(-1))
	f.Add(uint8(1), int64(1), int64(3), int64(1<<40-1), int64(1<<10-1), int64(1023), int64(-1)<<1)
	// Each field just past its max, and negative.
	f.Add(uint8(0), int64(2), int64(4), int64(1<<30), int64(1<<20), int64(1024), int64(math.MaxInt64))
	f.Add(uint8(1), int64(-1), int64(-1), int64(-1), int64(-1), int64(-1), int64(math.MinInt64))
	f.Add(uint8(1), int64(0), int64(0), int64(1<<40), int64(1<<10), int64(0), int64(12345))
	f.Add(uint8(7), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0))

	svc := newSvc(f, service.Settings{})
	f.Fuzz(func(t *testing.T, typ uint8, version, genMethod, tm, seq, machine, rawBits int64) {
		raw := intf.Id(rawBits)
		ctx := bg
		// Reduced into range.
		tt := intf.IdType(typ % 2)
		l, err := tt.Layout()
		if err != nil {
			t.Fatal(err)
		}
		in := intf.IdFields{
			Machine:   mod(machine, l.Machine.Max()+1),
			Seq:       mod(seq, l.Seq.Max()+1),
			Time:      mod(tm, l.Time.Max()+1),
			GenMethod: mod(genMethod, l.GenMethod.Max()+1),
			Type:      int64(tt),
			Version:   mod(version, l.Version.Max()+1),
		}
		id, err := svc.MakeId(ctx, intf.FromFields(in))
		if err != nil {
			t.Fatalf("MakeId(%v): %v", in, err)
		}
		out, err := svc.ExpId(ctx, id)
		if err != nil {
			t.Fatalf("ExpId(%d): %v", id, err)
		}
		if out != in {
			t.Fatalf("ExpId(MakeId(%v)) = %v", in, out)
		}
		if want := uint64(in.Machine) | uint64(in.Seq)<<l.Seq.Shift | uint64(in.Time)<<l.Time.Shift |
			uint64(in.GenMethod)<<60 | uint64(in.Type)<<62 | uint64(in.Version)<<63; uint64(id) != want {
			t.Fatalf("MakeId(%v) = %#x, want %#x", in, uint64(id), want)
		}

		// Raw values: either all in range (then the same round trip), or
		// an error naming an out-of-range field.
		rawIn := intf.IdFields{Machine: machine, Seq: seq, Time: tm, GenMethod: genMethod, Type: int64(typ), Version: version}
		var bad []string
		if rawIn.Type > 1 {
			bad = append(bad, "type")
		}
		rl := l
		if rawIn.Type <= 1 {
			rl, _ = intf.IdType(rawIn.Type).Layout()
		}
		for _, c := range []struct {
			name string
			v    int64
			max  int64
		}{{"machine", machine, rl.Machine.Max()}, {"seq", seq, rl.Seq.Max()}, {"time", tm, rl.Time.Max()},
			{"genMethod", genMethod, rl.GenMethod.Max()}, {"version", version, rl.Version.Max()}} {
			if c.v < 0 || c.v > c.max {
				bad = append(bad, c.name)
			}
		}
		id, err = svc.MakeId(ctx, intf.FromFields(rawIn))
		if len(bad) == 0 {
			if err != nil {
				t.Fatalf("MakeId(%v): %v", rawIn, err)
			}
			if out, _ := svc.ExpId(ctx, id); out != rawIn {
				t.Fatalf("ExpId(MakeId(%v)) = %v", rawIn, out)
			}
		} else {
			var fe *intf.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, intf.ErrInvalidArgument) {
				t.Fatalf("MakeId(%v) = %d, %v; want a FieldError for one of %v", rawIn, id, err, bad)
			}
			if !slices.Contains(bad, fe.Field) {
				t.Fatalf("MakeId(%v): error names %q, want one of %v", rawIn, fe.Field, bad)
			}
			if id != 0 {
				t.Fatalf("MakeId(%v) returned id %d with its error", rawIn, id)
			}
		}

		// Every bit pattern.
		parts, err := svc.ExpId(ctx, raw)
		if err != nil {
			t.Fatalf("ExpId(%d): %v", raw, err)
		}
		if typeBit := int64(uint64(raw) >> 62 & 1); parts.Type != typeBit {
			t.Fatalf("ExpId(%d).Type = %d, want the type bit %d", raw, parts.Type, typeBit)
		}
		back, err := svc.MakeId(ctx, intf.FromFields(parts))
		if err != nil || back != raw {
			t.Fatalf("MakeId(ExpId(%d) = %v) = %d, %v", raw, parts, back, err)
		}
	})
}

// mod is v modulo m in 0..m-1, also for negative v.
func mod(v, m int64) int64 {
	r := v % m
	if r < 0 {
		r += m
	}
	return r
}
