package rpcserver_test

import (
	"encoding/gob"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/syncbuf"
)

// header is a new struct type for call i: net/rpc's request header
// (ServiceMethod, Seq) with n more int fields, and an any field with
// iface. gob defines it on the connection before the call's header.
func header(i, n int, iface bool) reflect.Type {
	fields := []reflect.StructField{
		{Name: "ServiceMethod", Type: reflect.TypeFor[string]()},
		{Name: "Seq", Type: reflect.TypeFor[uint64]()},
	}
	for j := range n {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("C%dF%d", i, j), Type: reflect.TypeFor[int]()})
	}
	if iface {
		fields = append(fields, reflect.StructField{Name: "X", Type: reflect.TypeFor[any]()})
	}
	return reflect.StructOf(fields)
}

// sendCalls writes calls GenId calls to w, each header of a new type with
// n int fields, until a write fails.
func sendCalls(w io.Writer, calls, n int, iface bool) {
	enc := gob.NewEncoder(w)
	for i := range calls {
		h := reflect.New(header(i, n, iface)).Elem()
		h.Field(0).SetString("IdService.GenId")
		h.Field(1).SetUint(uint64(i))
		if iface {
			h.Field(h.NumField() - 1).Set(reflect.ValueOf(any(i)))
		}
		if enc.EncodeValue(h) != nil || enc.Encode(rpcapi.GenIdArgs{}) != nil {
			return
		}
	}
}

// A connection's gob type definitions are bounded before its caller is
// known: past MaxTypeDefs definitions, or MaxTypeDefBytes bytes of them,
// or at a type using interface values (which may carry definitions inside
// a value), it is closed, counted and logged; other connections are
// served.
func TestTypeDefinitionFlood(t *testing.T) {
	var logs syncbuf.Buffer
	srv := rpctest.Start(t, rpctest.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for i, tc := range []struct {
		name         string
		calls, field int
		iface        bool
	}{
		{"many definitions", 10 * rpcserver.DefaultMaxTypeDefs, 2, false},
		{"big definitions", 10, rpcserver.DefaultMaxTypeDefBytes / 8, false}, // over the bytes at the first
		{"an interface", 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := nettest.DialFrom(t, attacker, srv.Addr)
			go sendCalls(c, tc.calls, tc.field, tc.iface)
			waitClosed(t, c)
			eventually(t, "counted", func(s rpcserver.Stats) bool { return s.BadTypes == uint64(i+1) && s.Open == 0 }, srv.RPC)
			genId(t, dial(t, srv.Addr))
			if i == 0 {
				// The warning is written as the connection ends, just after the count.
				require.Eventually(t, func() bool { return strings.Contains(logs.String(), "gob types refused") }, 10*time.Second,
					time.Millisecond, "the refusal is logged")
				assert.Contains(t, logs.String(), "33 type definitions")
			}
		})
	}
}

// A client calling every method, each several times, stays within a
// third of the default number of definitions and an eighth of their
// bytes: the defaults leave room for clients bigger than this one.
func TestEveryMethodWithinTypeLimits(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Options: rpcserver.Options{
		MaxTypeDefs: rpcserver.DefaultMaxTypeDefs / 3, MaxTypeDefBytes: rpcserver.DefaultMaxTypeDefBytes / 8}})
	c := dial(t, srv.Addr)
	calls := []struct {
		method     string
		args, repl any
	}{
		{"GenId", rpcapi.GenIdArgs{Token: "t"}, &rpcapi.GenIdReply{}},
		{"GenIds", rpcapi.GenIdsArgs{Count: 1}, &rpcapi.GenIdsReply{}},
		{"ExpId", rpcapi.ExpIdArgs{Id: 1}, &rpcapi.ExpIdReply{}},
		{"MakeId", rpcapi.MakeIdArgs{}, &rpcapi.MakeIdReply{}},
		{"TransTime", rpcapi.TransTimeArgs{}, &rpcapi.TransTimeReply{}},
		{"SegmentNextIds", rpcapi.SegmentArgs{Tag: "a", Count: 1}, &rpcapi.SegmentReply{}},
		{"SegmentRange", rpcapi.SegmentRangeArgs{Tag: "a"}, &rpcapi.SegmentRangeReply{}},
		{"SegmentNextNumber", rpcapi.SegmentNumberArgs{Tag: "a"}, &rpcapi.SegmentNumberReply{}},
	}
	for range 3 {
		for _, call := range calls {
			require.NoError(t, c.Call("IdService."+call.method, call.args, call.repl), call.method)
		}
	}
	assert.Zero(t, srv.RPC.Stats().BadTypes)
}
