package rpcapi

import (
	"bytes"
	"encoding/gob"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

func TestMakeIdArgsKeepExplicitZeros(t *testing.T) {
	for _, req := range []intf.MakeIdRequest{
		intf.MakeIdRequest{Time: 5, Seq: 6},
		intf.MakeIdRequest{Time: 5, Seq: 6}.WithMachine(0),
		intf.MakeIdRequest{Time: 0, Seq: 0}.WithMachine(0).WithGenMethod(0).WithType(0).WithVersion(0),
		intf.FromFields(intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2, Type: 1, Version: 1}),
		intf.MakeIdRequest{Time: 1, Seq: 2}.WithVersion(1),
	} {
		var buf bytes.Buffer
		require.NoError(t, gob.NewEncoder(&buf).Encode(NewMakeIdArgs(req)))
		var a MakeIdArgs
		require.NoError(t, gob.NewDecoder(&buf).Decode(&a))
		assert.Equal(t, req, a.Request())
	}
}

// The wire types that carry an intf.Id encode exactly as the int64 fields
// they had (gob sends a named int64 as an int64, and matches struct fields
// by name): a peer built before the change and one built after read each
// other, both ways. (The bytes differ only in gob's type ids, which a
// process numbers in the order it meets types.)
func TestIdFieldsKeepTheInt64Wire(t *testing.T) {
	const id, neg = 2705126582500361294, -6518245454354414514
	// The shapes of before, with the same type names (gob sends them).
	type GenIdReply struct {
		Id  int64
		Err *Error
	}
	type GenIdsReply struct {
		Ids []int64
		Err *Error
	}
	type ExpIdArgs struct {
		Id      int64
		Timeout time.Duration
		Token   string
	}
	type MakeIdReply struct {
		Id  int64
		Err *Error
	}
	encode := func(v any) []byte {
		var buf bytes.Buffer
		require.NoError(t, gob.NewEncoder(&buf).Encode(v))
		return buf.Bytes()
	}
	roundTrip := func(name string, old, cur, oldOut, curOut any) {
		t.Helper()
		require.NoError(t, gob.NewDecoder(bytes.NewReader(encode(old))).Decode(curOut), name)
		require.NoError(t, gob.NewDecoder(bytes.NewReader(encode(cur))).Decode(oldOut), name)
	}

	var g GenIdReply
	var gc rpcapiGenIdReply
	roundTrip("GenIdReply", GenIdReply{Id: neg}, rpcapiGenIdReply{Id: neg}, &g, &gc)
	assert.Equal(t, int64(neg), g.Id)
	assert.Equal(t, intf.Id(neg), gc.Id)

	var gs GenIdsReply
	var gsc rpcapiGenIdsReply
	roundTrip("GenIdsReply", GenIdsReply{Ids: []int64{1, id, neg}}, rpcapiGenIdsReply{Ids: []intf.Id{1, id, neg}}, &gs, &gsc)
	assert.Equal(t, []int64{1, id, neg}, gs.Ids)
	assert.Equal(t, []intf.Id{1, id, neg}, gsc.Ids)

	var e ExpIdArgs
	var ec rpcapiExpIdArgs
	roundTrip("ExpIdArgs", ExpIdArgs{Id: id, Timeout: time.Second, Token: "t"},
		rpcapiExpIdArgs{Id: id, Timeout: time.Second, Token: "t"}, &e, &ec)
	assert.Equal(t, ExpIdArgs{Id: id, Timeout: time.Second, Token: "t"}, e)
	assert.Equal(t, rpcapiExpIdArgs{Id: id, Timeout: time.Second, Token: "t"}, ec)

	var m MakeIdReply
	var mc rpcapiMakeIdReply
	roundTrip("MakeIdReply", MakeIdReply{Id: id}, rpcapiMakeIdReply{Id: id}, &m, &mc)
	assert.Equal(t, int64(id), m.Id)
	assert.Equal(t, intf.Id(id), mc.Id)
}

// The package's types under other names, so that the test's shapes of
// before can take theirs.
type (
	rpcapiGenIdReply  = GenIdReply
	rpcapiGenIdsReply = GenIdsReply
	rpcapiExpIdArgs   = ExpIdArgs
	rpcapiMakeIdReply = MakeIdReply
)
