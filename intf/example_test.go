package intf_test

import (
	"fmt"

	"github.com/vesta-go/vesta/intf"
)

// MakeIdRequest{Time, Seq} is Vesta's makeId(time, seq); the With methods give the longer
// arities, here makeId(time, seq, machine). Fields left nil are filled from
// the service's configuration by MakeId.
func ExampleMakeIdRequest() {
	r := intf.MakeIdRequest{Time: 371861805, Seq: 498081}.WithMachine(78)
	fmt.Println(r.Time, r.Seq, *r.Machine)
	fmt.Println("genMethod from the service:", r.GenMethod == nil)
	// Output:
	// 371861805 498081 78
	// genMethod from the service: true
}

func ExampleParseIdType() {
	for _, s := range []string{"max-peak", "MIN_GRANULARITY", "1", "fast"} {
		t, err := intf.ParseIdType(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s -> %d (%s)\n", s, t, t)
	}
	// Output:
	// max-peak -> 0 (max-peak)
	// MIN_GRANULARITY -> 1 (min-granularity)
	// 1 -> 1 (min-granularity)
	// error: invalid argument: type "fast": want max-peak (0) or min-granularity (1)
}

// Decode reads an ID's own type bit, so any ID can be decoded without
// knowing which service issued it; its Layout reads each field.
func ExampleDecode_layout() {
	id := intf.Id(2705126582500361294)
	_, l := intf.Decode(id)
	u := uint64(id)
	fmt.Println(l.Type, l.Machine.Get(u), l.Seq.Get(u), l.Time.Get(u), l.GenMethod.Get(u))
	// Output:
	// max-peak 78 498081 371861805 2
}
