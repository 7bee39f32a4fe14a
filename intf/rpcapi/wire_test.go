package rpcapi

import (
	"bytes"
	"encoding/gob"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

func TestMakeIdArgsKeepExplicitZeros(t *testing.T) {
	for _, req := range []intf.MakeIdRequest{
		intf.TimeSeq(5, 6),
		intf.TimeSeq(5, 6).WithMachine(0),
		intf.TimeSeq(0, 0).WithMachine(0).WithGenMethod(0).WithType(0).WithVersion(0),
		intf.FromFields(intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2, Type: 1, Version: 1}),
		intf.TimeSeq(1, 2).WithVersion(1),
	} {
		var buf bytes.Buffer
		require.NoError(t, gob.NewEncoder(&buf).Encode(NewMakeIdArgs(req)))
		var a MakeIdArgs
		require.NoError(t, gob.NewDecoder(&buf).Decode(&a))
		assert.Equal(t, req, a.Request())
	}
}
