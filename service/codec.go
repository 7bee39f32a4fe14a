package service

import "github.com/vesta-go/vesta/intf"

// encode packs fields into an ID after checking each against its width, so
// no value can spill into a neighbouring field (Vesta's encoder did not
// check). The type comes from l; id.Type is ignored.
func encode(l intf.Layout, id intf.Id) (int64, error) {
	checks := [...]struct {
		f intf.Field
		v int64
	}{{l.Machine, id.Machine}, {l.Seq, id.Seq}, {l.Time, id.Time}, {l.GenMethod, id.GenMethod}, {l.Version, id.Version}}
	for _, c := range checks {
		if err := intf.CheckRange(c.f.Name, c.v, 0, c.f.Max()); err != nil {
			return 0, err
		}
	}
	return int64(uint64(id.Machine) | uint64(id.Seq)<<l.Seq.Shift | uint64(id.Time)<<l.Time.Shift |
		uint64(id.GenMethod)<<l.GenMethod.Shift | uint64(l.Type)<<l.TypeBit.Shift |
		uint64(id.Version)<<l.Version.Shift), nil
}

// decode splits an ID by the layout named in its own type bit.
func decode(id int64) intf.Id {
	u := uint64(id)
	l := intf.LayoutOfId(id)
	return intf.Id{
		Machine:   l.Machine.Get(u),
		Seq:       l.Seq.Get(u),
		Time:      l.Time.Get(u),
		GenMethod: l.GenMethod.Get(u),
		Type:      l.TypeBit.Get(u),
		Version:   l.Version.Get(u),
	}
}
