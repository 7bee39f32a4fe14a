package etcdlease_test

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

// A generator that leases its machine id from etcd. service.New returns
// once an id is held; GenId fails with intf.ErrFenced while it is not
// surely held. (Needs an etcd server, so it is compiled but not run.)
func ExampleNew() {
	lease, err := etcdlease.New(etcdlease.Options{
		Endpoints: []string{"etcd-0:2379", "etcd-1:2379", "etcd-2:2379"},
		Common:    etcdlease.Common{TTL: 10 * time.Second, NodeName: "ids-1"},
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
	fmt.Println(svc.Stats().Machine, id, err)
}

// NewWithClient leases through a client the program already has (as etcd's
// concurrency.NewSession takes one); the program keeps owning it.
func ExampleNewWithClient() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"etcd-0:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cli.Close() // after the service: its Close releases the id through cli
	lease, err := etcdlease.NewWithClient(cli, etcdlease.Options{Common: etcdlease.Common{NodeName: "ids-1"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	svc, err := service.New(context.Background(), service.Settings{Lease: lease, DataDir: "/var/lib/vesta"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close()
}
