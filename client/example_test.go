package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// startServer runs a central server in-process, as server-rpc does.
func startServer(machine int64, opts ...rpcapi.ReceiverOption) (addr string, stop func()) {
	quiet := slog.New(slog.DiscardHandler)
	svc, err := service.New(context.Background(), service.Settings{
		Machine: machine, GenMethod: intf.GenMethodCentral, NoDataDir: true, Logger: quiet,
	})
	if err != nil {
		panic(err)
	}
	srv, err := rpcserver.New(rpcapi.NewReceiver(svc, 1000, opts...), rpcserver.Options{Logger: quiet})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	return ln.Addr().String(), func() {
		srv.Shutdown(context.Background())
		svc.Close()
	}
}

func ExampleNew() {
	addr, stop := startServer(78)
	defer stop()

	// One address here; list fail-overs after it.
	c, err := client.New([]string{addr}, client.WithPoolSize(2))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx := context.Background()
	id, _ := c.GenId(ctx)
	fields, _ := c.ExpId(ctx, id)
	fmt.Println("machine", fields.Machine, "genMethod", fields.GenMethod)

	ids, _ := c.GenIds(ctx, 3)
	fmt.Println(len(ids), "IDs in a batch, increasing:", ids[0] < ids[1] && ids[1] < ids[2])

	made, _ := c.MakeId(ctx, intf.MakeIdRequest{Time: 371861805, Seq: 498081}.WithGenMethod(2))
	fmt.Println(made)

	_, err = c.GenIds(ctx, 0)
	var fe *intf.FieldError
	if errors.As(err, &fe) {
		fmt.Println("bad", fe.Field, "- the server says:", err)
	}
	// Output:
	// machine 78 genMethod 1
	// 3 IDs in a batch, increasing: true
	// 2705126582500361294
	// bad count - the server says: invalid argument: count 0 out of range 1..1000
}

// startSegmentServer is startServer with segment mode: a segment.Generator
// on an in-memory store holding tag (step 1000); server-rpc runs one on
// SQLite or PostgreSQL with --segment-tags.
func startSegmentServer(tag string) (addr string, stop func()) {
	g, err := segtest.Open(context.Background(), segtest.NewMem(),
		[]segspec.Tag{{Tag: tag, MaxId: 1, Step: 1000}}, segment.Settings{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	addr, stopServer := startServer(1, rpcapi.WithSegments(g))
	return addr, func() {
		stopServer()
		g.Close()
	}
}

// NextIds serves segment mode: here the server runs a segment.Generator,
// as server-rpc does with --segment-tags order.
func ExampleClient_NextIds() {
	addr, stop := startSegmentServer("order")
	defer stop()

	c, err := client.New([]string{addr})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()
	ids, _ := c.NextIds(ctx, "order", 3)
	fmt.Println(ids)
	id, _ := c.NextSegmentId(ctx, "order")
	fmt.Println(id)
	_, err = c.NextIds(ctx, "coupon", 1)
	fmt.Println(errors.Is(err, intf.ErrUnknownTag), err)
	// Output:
	// [1 2 3]
	// 4
	// true segment tag "coupon": unknown segment tag
}

// WithSegmentRanges serves segment IDs from ranges the client holds: the
// first range has the tag's step (1000 here), the next ones grow while
// they go fast; an ID from a held range costs one atomic add.
func ExampleWithSegmentRanges() {
	addr, stop := startSegmentServer("order")
	defer stop()

	c, err := client.New([]string{addr}, client.WithSegmentRanges(0)) // ranges up to 10,000,000 IDs
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()
	for range 3 {
		id, _ := c.NextSegmentId(ctx, "order")
		fmt.Println(id)
	}
	ids, _ := c.NextIds(ctx, "order", 2) // from the same ranges
	fmt.Println(ids)
	st, _ := c.SegmentStatus("order")
	fmt.Println("range of", st.Step)
	// Output:
	// 1
	// 2
	// 3
	// [4 5]
	// range of 1000
}

// Sequence is a handle on one tag, got once and shared: with
// WithSegmentRanges its Next takes from the range the client holds
// without looking the tag up.
func ExampleClient_Sequence() {
	addr, stop := startSegmentServer("order")
	defer stop()

	c, err := client.New([]string{addr}, client.WithSegmentRanges(0))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	orders, err := c.Sequence("order")
	if err != nil {
		panic(err)
	}
	for range 3 {
		id, err := orders.Next()
		fmt.Println(id, err)
	}
	// Output:
	// 1 <nil>
	// 2 <nil>
	// 3 <nil>
}
