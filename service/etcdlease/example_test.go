package etcdlease_test

import (
	"context"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/etcdlease"
)

// A generator that leases its machine id from etcd. service.New returns
// once an id is held; GenId fails with intf.ErrFenced while it is not
// surely held. (Needs an etcd server, so it is compiled but not run.)
func ExampleNew() {
	lease, err := etcdlease.New(etcdlease.Options{
		Endpoints: []string{"etcd-0:2379", "etcd-1:2379", "etcd-2:2379"},
		TTL:       10 * time.Second,
		NodeName:  "ids-1",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	svc, err := service.New(ctx, service.Settings{Lease: lease, DataDir: "/var/lib/vesta"})
	if err != nil {
		fmt.Println(err) // e.g. etcd unreachable, every id taken, clock skew
		return
	}
	defer svc.Close() // stores the exact mark, then frees the id
	id, err := svc.GenId(ctx)
	fmt.Println(svc.Machine(), id, err)
}
