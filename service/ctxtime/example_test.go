package ctxtime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/service/ctxtime"
)

func ExampleWithTimeoutCause() {
	errTimeout := errors.New("callTimeout reached")
	ctx := ctxtime.WithTimeoutCause(context.Background(), 5*time.Second, errTimeout)
	defer ctx.Stop()
	// A callee that returns at once pays no timer; one that waits uses
	// Done, and wakes at the deadline with context.Cause(ctx) = errTimeout.
	fmt.Println(ctx.Err())
	// Output: <nil>
}
