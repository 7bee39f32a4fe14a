package intf_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

func TestMakeIdRequestLeavesOtherFieldsUnset(t *testing.T) {
	r := intf.MakeIdRequest{Time: 371861805, Seq: 498081}
	assert.Equal(t, int64(371861805), r.Time)
	assert.Equal(t, int64(498081), r.Seq)
	assert.Nil(t, r.Machine)
	assert.Nil(t, r.GenMethod)
	assert.Nil(t, r.Type)
	assert.Nil(t, r.Version)
}

func TestWithSetsExactlyItsField(t *testing.T) {
	// Vesta's REST door passed machine in an old argument position; here
	// each With method must set its own field and nothing else.
	base := intf.MakeIdRequest{Time: 10, Seq: 20}
	r := base.WithMachine(3)
	require.NotNil(t, r.Machine)
	assert.Equal(t, int64(3), *r.Machine)
	assert.Nil(t, r.GenMethod)
	assert.Nil(t, r.Type)
	assert.Nil(t, r.Version)

	r = base.WithGenMethod(2)
	require.NotNil(t, r.GenMethod)
	assert.Equal(t, int64(2), *r.GenMethod)
	assert.Nil(t, r.Machine)

	r = base.WithType(1)
	require.NotNil(t, r.Type)
	assert.Equal(t, int64(1), *r.Type)
	assert.Nil(t, r.Machine)

	r = base.WithVersion(1)
	require.NotNil(t, r.Version)
	assert.Equal(t, int64(1), *r.Version)
	assert.Nil(t, r.Machine)

	assert.Nil(t, base.Machine, "With returns a copy; the receiver is unchanged")
	assert.Equal(t, int64(10), r.Time)
	assert.Equal(t, int64(20), r.Seq)
}

func TestWithDoesNotAlias(t *testing.T) {
	a := intf.MakeIdRequest{Time: 1, Seq: 2}.WithMachine(5)
	b := a.WithMachine(6)
	assert.Equal(t, int64(5), *a.Machine)
	assert.Equal(t, int64(6), *b.Machine)
}

func TestFromFields(t *testing.T) {
	id := intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2, Type: 1, Version: 1}
	r := intf.FromFields(id)
	assert.Equal(t, id.Time, r.Time)
	assert.Equal(t, id.Seq, r.Seq)
	require.NotNil(t, r.Machine)
	require.NotNil(t, r.GenMethod)
	require.NotNil(t, r.Type)
	require.NotNil(t, r.Version)
	assert.Equal(t, id, intf.IdFields{Machine: *r.Machine, Seq: r.Seq, Time: r.Time, GenMethod: *r.GenMethod, Type: *r.Type, Version: *r.Version})
}

func TestIdJSONUsesVestaNames(t *testing.T) {
	id := intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2, Type: 0, Version: 1}
	b, err := json.Marshal(id)
	require.NoError(t, err)
	assert.JSONEq(t, `{"machine":78,"seq":498081,"time":371861805,"genMethod":2,"type":0,"version":1}`, string(b))
	var back intf.IdFields
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, id, back)
}

func TestIdString(t *testing.T) {
	id := intf.IdFields{Machine: 78, Seq: 498081, Time: 371861805, GenMethod: 2, Type: 0, Version: 1}
	assert.Equal(t, "{machine:78 seq:498081 time:371861805 genMethod:2 type:0 version:1}", id.String())
}
