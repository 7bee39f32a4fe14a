package main

import (
	"bytes"
	"encoding/gob"
	"net/rpc"
	"testing"

	"github.com/vesta-go/vesta/internal/rpcapi"
)

// The hand-built stream is gob's: a gob decoder reads the calls from it
// as net/rpc's server does.
func TestFloodIsGob(t *testing.T) {
	var g gobBuf
	f := newFlood(3, 500)
	for range 4 {
		f.call(&g)
	}
	dec := gob.NewDecoder(bytes.NewReader(g.b))
	for i := range 4 {
		var req rpc.Request
		if err := dec.Decode(&req); err != nil {
			t.Fatalf("call %d header: %v", i, err)
		}
		if req.ServiceMethod != "IdService.GenId" || req.Seq != uint64(i) {
			t.Fatalf("call %d header: %+v", i, req)
		}
		var args rpcapi.GenIdArgs
		if err := dec.Decode(&args); err != nil {
			t.Fatalf("call %d args: %v", i, err)
		}
	}
}
