package authfile_test

import (
	"fmt"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/authfile"
)

func ExampleParse() {
	file := `clients:
  - name: orders
    tokenSHA256: ` + access.HashTokenHex("vesta_example") + `
    scopes: [genid, "segment:order"]
    rate: 200000
`
	p, err := authfile.Parse("auth.yaml", []byte(file))
	fmt.Println(err)
	for _, c := range p.Clients() {
		fmt.Println(c.Name, c.Scopes, c.Rate, c.Burst)
	}
	_, err = authfile.Parse("auth.yaml", []byte("clients:\n  - name: orders\n    tokenSHA256: "+
		access.HashTokenHex("vesta_example")+"\n    scopes: [genid, admin]\n"))
	fmt.Println(err)
	// Output:
	// <nil>
	// orders [genid segment:order] 200000 200000
	// auth file auth.yaml: line 4: client 1 (orders): scopes: scope "admin": want genid, decode, metrics, segment:* or segment:<tag>
}
