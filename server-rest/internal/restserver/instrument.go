package restserver

import (
	"fmt"
	"net/http"
	"runtime"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/service/ctxtime"
)

// serve answers one request of the route: it answers any error the
// handler returns (or the body limit, or a panic), then records the
// request with its final status and latency.
func (rt *route) serve(c echo.Context) error {
	start := ctxtime.Monotonic()
	if err := rt.run(c); err != nil {
		rt.s.handleError(err, c)
	}
	rt.rm.Observe(outcome(c.Response().Status), ctxtime.Monotonic()-start)
	return nil
}

// run refuses a request body declared over bodyLimit, or sent chunked
// (its length unknown): no endpoint reads a body, so Echo's BodyLimit,
// which checks only what a handler reads, would let an endless chunked
// body through. Then it runs the handler, turning a panic into a 500
// error (recovered).
func (rt *route) run(c echo.Context) (err error) {
	if n := c.Request().ContentLength; n > bodyLimit || n < 0 {
		return echo.ErrStatusRequestEntityTooLarge
	}
	defer func() {
		if r := recover(); r != nil {
			err = rt.s.recovered(c, r)
		}
	}()
	return rt.h(c)
}

// recoverStackSize bounds the stack a recovered panic logs (Echo's
// Recover's default).
const recoverStackSize = 4 << 10

// recovered logs the panic r of a handler with the stacks of all
// goroutines, as Echo's Recover did, and returns the error to answer: a
// 500 saying "internal error". http.ErrAbortHandler panics on, for
// net/http to abort the response.
func (s *Server) recovered(c echo.Context, r any) error {
	if r == http.ErrAbortHandler {
		panic(r)
	}
	err, ok := r.(error)
	if !ok {
		err = fmt.Errorf("%v", r)
	}
	stack := make([]byte, recoverStackSize)
	stack = stack[:runtime.Stack(stack, true)]
	s.log.Error("rest: panic in handler", "path", c.Request().URL.Path, "err", err, "stack", string(stack))
	return &apiError{Status: http.StatusInternalServerError, Msg: "internal error", Err: err}
}

// codeOK is the outcome of a 200.
const codeOK = "200"

// outcome is the code label of status: a 200's without an allocation.
func outcome(status int) string {
	if status == http.StatusOK {
		return codeOK
	}
	return strconv.Itoa(status)
}

// handleUnrouted is the Echo HTTPErrorHandler. Only what matched no route
// reaches it (every route's instrument answers its own errors): it answers
// 404 or 405 and counts it, under the route for a 405 and as unmatched for
// a 404. Its latency is not observed.
func (s *Server) handleUnrouted(err error, c echo.Context) {
	s.handleError(err, c)
	code := c.Response().Status
	rm, ok := s.metrics.routes[c.Path()]
	if !ok || code == http.StatusNotFound {
		rm = s.metrics.routes[unmatchedRoute]
	}
	rm.Count(outcome(code))
}
