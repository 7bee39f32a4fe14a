package intf_test

import (
	"fmt"

	"github.com/vesta-go/vesta/intf"
)

// Every form of an ID reads back to the same ID; the reader names the
// form.
func ExampleId_Format() {
	id := intf.Id(2705126582500361294)
	for _, f := range intf.Forms {
		s := id.Format(f)
		back, err := intf.ParseIdAs(s, f)
		fmt.Println(f, s, back == id, err)
	}
	// Output:
	// dec 2705126582500361294 true <nil>
	// base62 3DpVWTCF2ju true <nil>
	// base58 7HCPhEfmNJZ true <nil>
	// base36 kjvrcc2y4cwe true <nil>
	// sortable 3DpVWTCF2ju true <nil>
	// friendly 2026-10-13T14:56:45Z_m78_s498081_g2 true <nil>
}
