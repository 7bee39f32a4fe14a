package pgrepl_test

import (
	"errors"
	"fmt"

	"github.com/vesta-go/vesta/service/backend/pgrepl"
)

// A primary whose commits do not wait for a standby is refused when the
// DSN names several servers; the error names the keys of its user.
func ExampleError() {
	p := &pgrepl.Policy{Who: "pglease", DSNKey: "machineDSN", AllowKey: "machineAllowAsyncFailover",
		Does: "claim machine ids", Lost: "A claim stored just before a failover", Hosts: 2}
	r := pgrepl.Replication{SynchronousCommit: "on"}
	fmt.Println(r.Synchronous(), r.Why())
	err := error(&pgrepl.Error{Policy: p, Server: "10.0.0.1:5432", Replication: r})
	fmt.Println(errors.Is(err, pgrepl.ErrUnsafe), errors.Is(err, pgrepl.ErrStandby))
	// Output:
	// false synchronous_standby_names is empty: commits do not wait for any standby
	// true false
}

func ExampleReplication_Synchronous() {
	for _, r := range []pgrepl.Replication{
		{SynchronousCommit: "on", SynchronousStandbyNames: "*"},
		{SynchronousCommit: "remote_write", SynchronousStandbyNames: "*"},
	} {
		fmt.Printf("%v %q\n", r.Synchronous(), r.Why())
	}
	// Output:
	// true ""
	// false "synchronous_commit is \"remote_write\": commits do not wait until a standby has them on disk"
}
