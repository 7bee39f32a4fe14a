package service_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// New starts the embedded generator. The data dir keeps the time
// high-water mark that protects a restart with the clock set back.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "vesta-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	svc, err := service.New(ctx, service.Settings{
		Machine:   78,
		GenMethod: intf.GenMethodEmbedded,
		Type:      intf.MaxPeak,
		DataDir:   dir,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()

	id, err := svc.GenId(ctx)
	if err != nil {
		log.Fatal(err)
	}
	f, err := svc.ExpId(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	// The time and seq fields depend on when this runs; the others do not.
	fmt.Println("machine:", f.Machine, "genMethod:", f.GenMethod, "type:", intf.IdType(f.Type), "version:", f.Version)
	when, err := svc.TransTime(ctx, f.Time, intf.IdType(f.Type))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("issued after the epoch:", when.After(time.UnixMilli(intf.DefaultEpochMillis)))
	// Output:
	// machine: 78 genMethod: 0 type: max-peak version: 0
	// issued after the epoch: true
}

// MakeId packs fields given by the caller; the ones left out come from the
// service's settings (here machine 78 and genMethod 2, REST).
func ExampleService_MakeId() {
	ctx := context.Background()
	// MakeId needs no clock or data dir; a service without a data dir
	// warns about restarts, so its logger is silenced here.
	svc, err := service.New(ctx, service.Settings{Machine: 78, GenMethod: intf.GenMethodREST, NoDataDir: true, Logger: discardLog})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()

	id, err := svc.MakeId(ctx, intf.MakeIdRequest{Time: 371861805, Seq: 498081})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id)
	f, _ := svc.ExpId(ctx, id)
	fmt.Println(f)

	_, err = svc.MakeId(ctx, intf.MakeIdRequest{Time: 371861805, Seq: 1 << 20})
	fmt.Println(err)
	// Output:
	// 2705126582500361294
	// {machine:78 seq:498081 time:371861805 genMethod:2 type:0 version:0}
	// invalid argument: seq 1048576 out of range 0..1048575
}
