package outage_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/internal/outage"
)

type sqlErr string

func (e sqlErr) Error() string    { return "sqlstate " + string(e) }
func (e sqlErr) SQLState() string { return string(e) }

func TestSilent(t *testing.T) {
	for _, c := range []struct {
		err    error
		silent bool
	}{
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{context.DeadlineExceeded, true},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), true},
		{sqlErr("08006"), true},
		{sqlErr("57P01"), true},
		{sqlErr("57P03"), true},
		{sqlErr("28P01"), false}, // a wrong password is a refusal
		{sqlErr("42P01"), false},
		{errors.New("no such table"), false},
		{context.Canceled, false},
	} {
		assert.Equal(t, c.silent, outage.Silent(c.err), "%v", c.err)
	}
}

func TestError(t *testing.T) {
	cause := errors.New("etcd: no answer")
	err := fmt.Errorf("claiming: %w", outage.Error{Err: cause})
	assert.True(t, outage.Is(err))
	assert.ErrorIs(t, err, cause)
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	assert.Equal(t, "claiming: etcd: no answer", err.Error())
	assert.False(t, outage.Is(cause))
}

func TestBound(t *testing.T) {
	ctx, cancel := outage.Bound(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	assert.True(t, outage.Silent(context.Cause(ctx)))
	assert.Equal(t, " (no answer within the dial timeout 1ms)", outage.TimedOut(ctx, ctx.Err(), time.Millisecond))
	assert.Empty(t, outage.TimedOut(context.Background(), errors.New("refused"), time.Millisecond))
}

func Example() {
	err := outage.Error{Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}
	fmt.Println(outage.Is(fmt.Errorf("claiming machine 7: %w", err)), errors.Is(err, intf.ErrUnavailable))
	fmt.Println(outage.Silent(errors.New("permission denied")))
	// Output:
	// true true
	// false
}
