package intf

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// IdType selects one of the two layouts. It is stored in bit 62 of every ID,
// so any ID says how to decode it.
type IdType int

const (
	// MaxPeak spends 20 bits on the sequence and counts time in seconds:
	// 1,048,576 IDs per second per machine id.
	MaxPeak IdType = 0
	// MinGranularity spends 10 bits on the sequence and counts time in
	// milliseconds: 1,024 IDs per millisecond per machine id.
	MinGranularity IdType = 1
)

// String returns "max-peak" or "min-granularity".
func (t IdType) String() string {
	switch t {
	case MaxPeak:
		return "max-peak"
	case MinGranularity:
		return "min-granularity"
	}
	return "IdType(" + strconv.Itoa(int(t)) + ")"
}

// ParseIdType accepts "max-peak", "min-granularity" (any case, '_' for '-')
// and the numbers "0" and "1".
func ParseIdType(s string) (IdType, error) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-") {
	case "0", "max-peak", "maxpeak":
		return MaxPeak, nil
	case "1", "min-granularity", "mingranularity":
		return MinGranularity, nil
	}
	return 0, fmt.Errorf("%w: type %q: want max-peak (0) or min-granularity (1)", ErrInvalidArgument, s)
}

// Field is one bit field of an ID: Bits wide, starting at bit Shift.
type Field struct {
	Name  string
	Shift uint
	Bits  uint
}

// Max is the largest value the field holds.
func (f Field) Max() int64 { return int64(uint64(1)<<f.Bits - 1) }

// Get extracts the field from an ID (an unsigned shift, like Java's >>>).
func (f Field) Get(id uint64) int64 { return int64(id >> f.Shift & uint64(f.Max())) }

// Put places v in the field's bits of an ID, cut to the field's width:
// check v first (Encode does) when it may be out of range.
func (f Field) Put(v int64) uint64 { return uint64(v) & uint64(f.Max()) << f.Shift }

// Layout is the bit layout of one IdType and the unit of its time field.
type Layout struct {
	Type      IdType
	Machine   Field
	Seq       Field
	Time      Field
	GenMethod Field
	TypeBit   Field
	Version   Field
	// Unit is what one step of the time field means: a second or a millisecond.
	Unit time.Duration
}

// Fields lists the fields from the least significant bit up.
func (l Layout) Fields() []Field {
	return []Field{l.Machine, l.Seq, l.Time, l.GenMethod, l.TypeBit, l.Version}
}

var layouts = [2]Layout{
	MaxPeak:        newLayout(MaxPeak, 20, 30, time.Second),
	MinGranularity: newLayout(MinGranularity, 10, 40, time.Millisecond),
}

func newLayout(t IdType, seqBits, timeBits uint, unit time.Duration) Layout {
	return Layout{
		Type:      t,
		Machine:   Field{Name: "machine", Shift: 0, Bits: machineBits},
		Seq:       Field{Name: "seq", Shift: machineBits, Bits: seqBits},
		Time:      Field{Name: "time", Shift: machineBits + seqBits, Bits: timeBits},
		GenMethod: Field{Name: "genMethod", Shift: 60, Bits: 2},
		TypeBit:   Field{Name: "type", Shift: 62, Bits: 1},
		Version:   Field{Name: "version", Shift: 63, Bits: 1},
		Unit:      unit,
	}
}

// Layout returns the layout of t, or ErrInvalidArgument for a t that is
// neither MaxPeak nor MinGranularity.
func (t IdType) Layout() (Layout, error) {
	if t != MaxPeak && t != MinGranularity {
		return Layout{}, &FieldError{Field: "type", Value: int64(t), Min: 0, Max: 1}
	}
	return layouts[t], nil
}

// layoutOf returns the layout an ID was made with, read from its type bit
// (bit 62).
func layoutOf(id Id) Layout { return layouts[IdType(uint64(id)>>62&1)] }
