package rpcapi

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
		{fmt.Errorf("segment tag %q: %w", "coupon", intf.ErrUnknownTag), CodeUnknownTag},
		{ErrSegmentOff, CodeSegmentOff},
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

func TestTagErrorSurvivesTheWire(t *testing.T) {
	sent := intf.CheckTag("a b")
	got := overGob(t, ToWire(sent))
	assert.Equal(t, CodeInvalidArgument, got.Code)
	assert.ErrorIs(t, got, intf.ErrInvalidArgument)
	var te *intf.TagError
	require.ErrorAs(t, got, &te)
	assert.Equal(t, *sent.(*intf.TagError), *te)
	var fe *intf.FieldError
	assert.False(t, errors.As(got, &fe), "no field error was sent")
	assert.Equal(t, sent.Error(), got.Error())
}

// A used-up period travels as its own code, with the tag, the period and
// the width; it is no "unavailable" (no fail-over helps).
func TestPeriodExhaustedSurvivesTheWire(t *testing.T) {
	pe := &intf.PeriodExhaustedError{Tag: "order", Period: "20261127", Width: 2, Max: 99,
		Ends: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), RetryAfter: 90 * time.Minute}
	sent := fmt.Errorf("number: %w", pe)
	got := overGob(t, ToWire(sent))
	assert.Equal(t, CodePeriodExhausted, got.Code)
	assert.Equal(t, "period_exhausted", got.Code.Name())
	assert.ErrorIs(t, got, intf.ErrPeriodExhausted)
	assert.NotErrorIs(t, got, intf.ErrUnavailable)
	var gp *intf.PeriodExhaustedError
	require.ErrorAs(t, got, &gp)
	assert.Equal(t, pe.Ends, gp.Ends.UTC())
	gp.Ends = pe.Ends
	assert.Equal(t, *pe, *gp)
	assert.Equal(t, sent.Error(), got.Error())
}

// ErrFenced travels as CodeUnavailable, so that every client, old ones
// included, fails over on it; its message is kept.
func TestFencedIsUnavailable(t *testing.T) {
	got := overGob(t, ToWire(fmt.Errorf("genid: %w", intf.ErrFenced)))
	assert.Equal(t, CodeUnavailable, got.Code)
	assert.ErrorIs(t, got, intf.ErrUnavailable)
	assert.Contains(t, got.Error(), "fenced")
}

func TestSegmentCodesAreDistinct(t *testing.T) {
	assert.NotErrorIs(t, ErrSegmentOff, intf.ErrUnavailable, "off is configuration, not trouble: no fail-over")
	assert.NotErrorIs(t, ErrSegmentOff, intf.ErrUnknownTag)
	assert.Equal(t, ErrSegmentOff.Error(), CodeSegmentOff.String())
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

// An error quoting a huge piece of input quotes a bounded prefix and the
// length, in the message and in the TagError that travels with it.
func TestHugeInputIsQuotedBounded(t *testing.T) {
	tag := strings.Repeat("x", 100_000) + " "
	got := overGob(t, ToWire(fmt.Errorf("segment: %w", intf.CheckTag(tag))))
	assert.ErrorIs(t, got, intf.ErrInvalidArgument)
	assert.Less(t, len(got.Error()), 300, got.Error())
	assert.Contains(t, got.Error(), strings.Repeat("x", 64)+"…(100001 bytes)")
	var te *intf.TagError
	require.ErrorAs(t, got, &te)
	assert.Equal(t, strings.Repeat("x", 64)+"…(100001 bytes)", te.Tag)

	long := overGob(t, ToWire(errors.New(strings.Repeat("é", 10_000))))
	assert.LessOrEqual(t, len(long.Error()), maxMessage+40)
	assert.True(t, utf8.ValidString(long.Error()), "cut at a character boundary")
	assert.Equal(t, "short", Bounded("short"))
}
