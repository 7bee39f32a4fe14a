package intf

import "time"

// Decode splits an ID into its fields by the layout its own type bit
// names, and returns that layout too: the one Encode takes to build the ID
// back (or a neighbour of it). It is pure: no service is needed to read an
// ID. Id.Fields is the same.
func Decode(id Id) (IdFields, Layout) {
	u := uint64(id)
	l := LayoutOfId(id)
	return IdFields{
		Machine:   l.Machine.Get(u),
		Seq:       l.Seq.Get(u),
		Time:      l.Time.Get(u),
		GenMethod: l.GenMethod.Get(u),
		Type:      l.TypeBit.Get(u),
		Version:   l.Version.Get(u),
	}, l
}

// Encode packs id's fields in layout l after checking each against its
// width, so that no value spills into a neighbouring field (Vesta's
// encoder did not check). id.Type must be l's type. An out-of-range field
// is a *FieldError naming it.
func Encode(l Layout, id IdFields) (Id, error) {
	if !l.Type.Valid() {
		return 0, &FieldError{Field: "type", Value: int64(l.Type), Min: 0, Max: 1}
	}
	if err := CheckRange("type", id.Type, int64(l.Type), int64(l.Type)); err != nil {
		return 0, err
	}
	checks := [...]struct {
		f Field
		v int64
	}{{l.Machine, id.Machine}, {l.Seq, id.Seq}, {l.Time, id.Time}, {l.GenMethod, id.GenMethod}, {l.Version, id.Version}}
	for _, c := range checks {
		if err := CheckRange(c.f.Name, c.v, 0, c.f.Max()); err != nil {
			return 0, err
		}
	}
	return Id(l.Machine.Put(id.Machine) | l.Seq.Put(id.Seq) | l.Time.Put(id.Time) |
		l.GenMethod.Put(id.GenMethod) | l.TypeBit.Put(int64(l.Type)) | l.Version.Put(id.Version)), nil
}

// Timestamp is the instant id's time field stands for, with the epoch in
// Unix milliseconds (DefaultEpochMillis for Vesta's), in UTC. The field is
// named Time, so the method cannot be; Id.Time reads it from the ID.
// A Type other than MinGranularity reads as max-peak (seconds).
func (id IdFields) Timestamp(epochMillis int64) time.Time {
	l := layouts[MaxPeak]
	if IdType(id.Type) == MinGranularity {
		l = layouts[MinGranularity]
	}
	return l.Instant(epochMillis, id.Time)
}

// Instant is the instant a time field of this layout stands for (field
// units of l.Unit after the epoch, in Unix milliseconds), in UTC.
func (l Layout) Instant(epochMillis, field int64) time.Time {
	return time.UnixMilli(epochMillis + field*l.Unit.Milliseconds()).UTC()
}
