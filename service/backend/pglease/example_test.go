package pglease_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/pglease"
)

// A generator that leases its machine id from a PostgreSQL table.
// service.New returns once an id is held; GenId fails with
// intf.ErrFenced while it is not surely held. (Needs a PostgreSQL server,
// so it is compiled but not run.)
func ExampleNew() {
	lease, err := pglease.New(pglease.Options{
		DSN:    os.Getenv("VESTA_MACHINE_DSN"), // postgres://vesta:password@db:5432/ids: keep it out of flags and logs
		Common: pglease.Common{TTL: time.Minute, MachineRange: &pglease.Range{First: 0, Last: 511}},
	})
	if err != nil {
		log.Fatal(err) // an *OptionError naming the field
	}
	// The data dir keeps the claim: a restart resumes the same id at once.
	svc, err := service.New(context.Background(), service.Settings{Lease: lease, DataDir: "/var/lib/vesta"})
	if err != nil {
		log.Fatal(err) // e.g. PostgreSQL unreachable, every id of the range taken, clock skew
	}
	defer svc.Close() // stores the exact mark, then releases the id (expires_at = -infinity)
	fmt.Println("machine", svc.Stats().Machine)
}

// Options are checked before anything connects; an error names the
// field, and never shows the DSN, which may hold a password.
func ExampleOptions_Validate() {
	err := pglease.Options{DSN: "postgres://vesta:secret@db:5432/ids", Table: "ids; DROP TABLE x"}.Validate()
	fmt.Println(err)
	err = pglease.Options{DSN: "postgres://vesta:secret@db:port/ids"}.Validate()
	fmt.Println(err)
	// Output:
	// pglease: option Table "ids; DROP TABLE x": want a table name, optionally schema.table, of letters, digits and _ (at most 56: its marks are in <table>_marks, the fleets' layouts in <table>_layout)
	// pglease: option DSN "(not shown: it may hold a password)": want a PostgreSQL URL or key=value DSN: cannot parse `postgres://vesta:xxxxx@db:port/ids`: invalid port
}
