package intf

import "time"

// Decode splits an ID into its fields by the layout its own type bit
// names, and returns that layout too: the one Encode builds the ID back in
// (or a neighbour of it). It is pure: no service is needed to read an ID.
// Id.Fields is the same.
func Decode(id Id) (IdFields, Layout) {
	u := uint64(id)
	l := layoutOf(id)
	return IdFields{
		Machine:   l.Machine.Get(u),
		Seq:       l.Seq.Get(u),
		Time:      l.Time.Get(u),
		GenMethod: l.GenMethod.Get(u),
		Type:      l.TypeBit.Get(u),
		Version:   l.Version.Get(u),
	}, l
}

// Encode packs f's fields into an ID in the layout f.Type names, as Decode
// reads an ID in the layout its type bit names, and returns that layout
// too. Each field is checked against its width first, so that no value
// spills into a neighbouring field (Vesta's encoder did not check): a
// field out of range, f.Type included, is a *FieldError naming it.
func Encode(f IdFields) (Id, Layout, error) {
	if err := CheckRange("type", f.Type, int64(MaxPeak), int64(MinGranularity)); err != nil {
		return 0, Layout{}, err
	}
	l := layouts[IdType(f.Type)]
	checks := [...]struct {
		f Field
		v int64
	}{{l.Machine, f.Machine}, {l.Seq, f.Seq}, {l.Time, f.Time}, {l.GenMethod, f.GenMethod}, {l.Version, f.Version}}
	for _, c := range checks {
		if err := CheckRange(c.f.Name, c.v, 0, c.f.Max()); err != nil {
			return 0, Layout{}, err
		}
	}
	return Id(l.Machine.Put(f.Machine) | l.Seq.Put(f.Seq) | l.Time.Put(f.Time) |
		l.GenMethod.Put(f.GenMethod) | l.TypeBit.Put(f.Type) | l.Version.Put(f.Version)), l, nil
}

// Instant is the instant a time field of this layout stands for (field
// units of l.Unit after the epoch, in Unix milliseconds), in UTC.
func (l Layout) Instant(epochMillis, field int64) time.Time {
	return time.UnixMilli(epochMillis + field*l.Unit.Milliseconds()).UTC()
}
