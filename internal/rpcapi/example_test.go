package rpcapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/rpc"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// A Receiver is a plain net/rpc receiver: register it, serve a connection,
// and call it with a Conn (or any net/rpc client with the wire types).
func ExampleReceiver() {
	svc, err := service.New(context.Background(), service.Settings{
		Machine: 78, GenMethod: intf.GenMethodCentral, NoDataDir: true, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer svc.Close()

	srv := rpc.NewServer()
	if err := srv.RegisterName(rpcapi.ServiceName, rpcapi.NewReceiver(svc, 1000)); err != nil {
		panic(err)
	}
	server, client := net.Pipe()
	go srv.ServeConn(server)
	conn := rpcapi.NewConn(rpc.NewClient(client), rpcapi.ServiceName)
	defer conn.Close()

	ctx := context.Background()
	// REFERENCE's worked example: the server's machine (78) fills the
	// omitted field.
	id, err := conn.MakeId(ctx, intf.MakeIdRequest{Time: 371861805, Seq: 498081}.WithGenMethod(2).WithType(0).WithVersion(0))
	fmt.Println(id, err)
	fields, _ := conn.ExpId(ctx, id)
	fmt.Println(fields)
	_, err = conn.GenIds(ctx, 1001)
	fmt.Println(err)

	// Output:
	// 2705126582500361294 <nil>
	// {machine:78 seq:498081 time:371861805 genMethod:2 type:0 version:0}
	// invalid argument: count 1001 out of range 1..1000
}
