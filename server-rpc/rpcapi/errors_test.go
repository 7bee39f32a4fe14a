package rpcapi

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// overGob sends e through gob as a reply would carry it.
func overGob(t *testing.T, e *Error) *Error {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, gob.NewEncoder(&buf).Encode(GenIdReply{Err: e}))
	var r GenIdReply
	require.NoError(t, gob.NewDecoder(&buf).Decode(&r))
	return r.Err
}

func TestErrorSurvivesTheWire(t *testing.T) {
	for _, c := range []struct {
		err  error
		code Code
	}{
		{intf.ErrInvalidArgument, CodeInvalidArgument},
		{fmt.Errorf("wrapped: %w", intf.ErrTimeOverflow), CodeTimeOverflow},
		{intf.ErrClockBehind, CodeClockBehind},
		{intf.ErrNotPersisted, CodeNotPersisted},
		{intf.ErrClosed, CodeClosed},
		{intf.ErrUnavailable, CodeUnavailable},
		{context.DeadlineExceeded, CodeDeadlineExceeded},
		{context.Canceled, CodeCanceled},
	} {
		got := overGob(t, ToWire(c.err))
		require.NotNil(t, got, c.err)
		assert.Equal(t, c.code, got.Code)
		assert.Equal(t, c.err.Error(), got.Error())
		assert.ErrorIs(t, got, c.code.Sentinel())
		assert.Equal(t, c.code.Sentinel().Error(), c.code.String())
	}
}

func TestFieldErrorSurvivesTheWire(t *testing.T) {
	sent := fmt.Errorf("makeid: %w", intf.CheckRange("seq", 1<<20, 0, 1<<20-1))
	got := overGob(t, ToWire(sent))
	assert.ErrorIs(t, got, intf.ErrInvalidArgument)
	var fe *intf.FieldError
	require.ErrorAs(t, got, &fe)
	assert.Equal(t, intf.FieldError{Field: "seq", Value: 1 << 20, Min: 0, Max: 1<<20 - 1}, *fe)
	assert.Equal(t, sent.Error(), got.Error())
}

func TestUnknownErrorIsInternal(t *testing.T) {
	got := overGob(t, ToWire(errors.New("disk on fire")))
	assert.Equal(t, CodeInternal, got.Code)
	assert.Equal(t, "disk on fire", got.Error())
	assert.Nil(t, got.Code.Sentinel())
	assert.Equal(t, "internal error", got.Code.String())
	assert.Equal(t, "code 42", Code(42).String())
	assert.NotErrorIs(t, got, intf.ErrInvalidArgument)
}

func TestNoErrorIsNil(t *testing.T) {
	assert.Nil(t, ToWire(nil))
	assert.Nil(t, overGob(t, nil))
	assert.NoError(t, errOf(nil)) // not a typed nil
}

func TestTransportErrorIsUnavailable(t *testing.T) {
	cause := errors.New("connection reset")
	err := error(&TransportError{Method: "IdService.GenId", Err: cause})
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	assert.ErrorIs(t, err, cause)
	assert.Contains(t, err.Error(), "IdService.GenId")
}
