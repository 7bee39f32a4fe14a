package lease_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/machineid"
)

// Common holds the options both leases take; a wrong one is an
// *OptionError naming the field, which matches intf.ErrInvalidArgument.
func ExampleCommon() {
	o := etcdlease.Options{Endpoints: []string{"127.0.0.1:2379"},
		Common: lease.Common{Prefix: "/ids/eu", TTL: 10 * time.Second, MachineRange: &machineid.Range{First: 0, Last: 511}}}
	fmt.Println(o.Validate())

	o.TTL = 1500 * time.Millisecond
	err := o.Validate()
	var oe *lease.OptionError
	fmt.Println(errors.As(err, &oe), oe.Option, errors.Is(err, intf.ErrInvalidArgument))
	// Output:
	// <nil>
	// true TTL true
}
