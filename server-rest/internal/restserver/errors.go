package restserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// apiError is an error with the HTTP status it is reported with. Param
// names the query parameter to blame, if one is.
type apiError struct {
	Status int
	Param  string
	Msg    string
	Err    error // the cause, if any, for errors.Is/As
	// Refusals of the guard (auth.go): the header at fault, the scope
	// lacking, the WWW-Authenticate challenge, when to retry.
	Header     string
	Scope      string
	WWWAuth    string
	RetryAfter time.Duration
	// A period tag's used-up period: the tag, the period and the width.
	Tag, Period string
	Width       int
}

func (e *apiError) Error() string { return e.Msg }
func (e *apiError) Unwrap() error { return e.Err }

// errorBody is the JSON of every error response.
type errorBody struct {
	Error  string `json:"error"`
	Param  string `json:"param,omitempty"`
	Header string `json:"header,omitempty"`
	Scope  string `json:"scope,omitempty"`
	// RetryAfter is the exact wait of a 429, or until a used-up period
	// ends (503), in seconds (Retry-After says it in whole seconds).
	RetryAfter float64 `json:"retryAfter,omitempty"`
	// Tag, Period and Width name a period tag's used-up period (503).
	Tag    string `json:"tag,omitempty"`
	Period string `json:"period,omitempty"`
	Width  int    `json:"width,omitempty"`
}

func badParam(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Param: param, Msg: "parameter " + param + ": " + fmt.Sprintf(format, args...)}
}

// ErrSegmentsOff is the error of /segment while segment mode is off
// (runtime.ErrSegmentsOff). The runtime's other states (starting,
// stopping, a segment store retried) match intf.ErrUnavailable or
// intf.ErrClosed, which classify answers 503 in the runtime's words.
var ErrSegmentsOff = runtime.ErrSegmentsOff

var errSegmentsOff = &apiError{Status: http.StatusNotFound, Err: ErrSegmentsOff,
	Msg: "segment mode is off (segmentStore: off)"}

// errCallTimeout is the cause of a request context that reached the
// server's callTimeout; callTimeoutError is its answer.
var errCallTimeout = errors.New("callTimeout reached")

func callTimeoutError(d time.Duration) *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Err: context.DeadlineExceeded,
		Msg: fmt.Sprintf("request timed out: no IDs within the server's callTimeout of %s; retry", d)}
}

// classify maps any error a handler returns to the status and message the
// client sees. A client's mistake is a 4xx, never a 500.
func classify(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return fromHTTPError(he)
	}
	if ae := accessError(err); ae != nil {
		return ae
	}
	var fe *intf.FieldError
	if errors.As(err, &fe) {
		return &apiError{Status: http.StatusBadRequest, Param: fe.Field, Err: err,
			Msg: fmt.Sprintf("parameter %s: %d is out of range %d..%d", fe.Field, fe.Value, fe.Min, fe.Max)}
	}
	var te *intf.TagError
	if errors.As(err, &te) {
		return &apiError{Status: http.StatusBadRequest, Param: "tag", Err: err,
			Msg: fmt.Sprintf("parameter tag: %s: %s", quoteShort(te.Tag), te.Reason)}
	}
	switch {
	case errors.Is(err, intf.ErrUnknownTag):
		return &apiError{Status: http.StatusNotFound, Param: "tag", Err: err,
			Msg: err.Error() + ": create it first (segmentTags, or vesta-segment create-tag)"}
	case errors.Is(err, segstore.ErrMaxIdOverflow):
		// Permanent, not the client's fault and not worth a retry: the
		// operator must act.
		return &apiError{Status: http.StatusInternalServerError, Err: err,
			Msg: err.Error() + ": the tag's numbers are used up; use a new tag"}
	case errors.Is(err, intf.ErrPeriodExhausted):
		return periodExhausted(err)
	case errors.Is(err, intf.ErrInvalidArgument):
		return &apiError{Status: http.StatusBadRequest, Msg: err.Error(), Err: err}
	case errors.Is(err, intf.ErrClosed), errors.Is(err, intf.ErrUnavailable),
		errors.Is(err, intf.ErrNotPersisted), errors.Is(err, intf.ErrTimeOverflow),
		errors.Is(err, intf.ErrClockBehind):
		return &apiError{Status: http.StatusServiceUnavailable, Msg: err.Error(), Err: err}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &apiError{Status: http.StatusServiceUnavailable, Msg: "request cancelled before the IDs were issued", Err: err}
	}
	return &apiError{Status: http.StatusInternalServerError, Msg: "internal error", Err: err}
}

// periodExhausted answers a period tag whose period's numbers are used
// up: 503, the server cannot serve the call now but can say when it will
// (Retry-After: until the period ends), and the body names the tag, the
// period and the width. Not 500: nothing is broken in the server, and
// the condition, logged once per period by the generator, is not logged
// per call.
func periodExhausted(err error) *apiError {
	ae := &apiError{Status: http.StatusServiceUnavailable, Msg: err.Error(), Err: err}
	var pe *intf.PeriodExhaustedError
	if errors.As(err, &pe) {
		ae.Tag, ae.Period, ae.Width, ae.RetryAfter = pe.Tag, pe.Period, pe.Width, pe.RetryAfter
	}
	return ae
}

// fromHTTPError words Echo's own errors (routing, the body limit) for the
// client.
func fromHTTPError(he *echo.HTTPError) *apiError {
	ae := &apiError{Status: he.Code, Err: he}
	switch he.Code {
	case http.StatusNotFound:
		ae.Msg = "no such endpoint: use " + strings.Join(endpointPaths(), ", ")
	case http.StatusMethodNotAllowed:
		ae.Msg = "method not allowed: every endpoint takes GET"
	case http.StatusRequestEntityTooLarge:
		ae.Msg = fmt.Sprintf("request body too large: the limit is %d bytes, chunked bodies are refused (the endpoints take no body)", bodyLimit)
	default:
		ae.Msg = strings.ToLower(http.StatusText(he.Code))
		if m, ok := he.Message.(string); ok && m != "" {
			ae.Msg = m
		}
	}
	if ae.Status >= http.StatusInternalServerError {
		ae.Msg = "internal error"
	}
	return ae
}

// handleError answers an error as JSON with the status classify gives it.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae := classify(err)
	if ae.Status >= http.StatusInternalServerError && ae.Status != http.StatusServiceUnavailable {
		s.log.Error("rest: internal error", "path", c.Request().URL.Path, "err", err)
	}
	h := c.Response().Header()
	switch {
	case ae.RetryAfter > 0:
		h.Set("Retry-After", retryAfterSeconds(ae.RetryAfter.Seconds()))
	case ae.Status == http.StatusServiceUnavailable:
		h.Set("Retry-After", "1")
	}
	if ae.WWWAuth != "" {
		h.Set(echo.HeaderWWWAuthenticate, ae.WWWAuth)
	}
	body := errorBody{Error: ae.Msg, Param: ae.Param, Header: ae.Header, Scope: ae.Scope, RetryAfter: ae.RetryAfter.Seconds(),
		Tag: ae.Tag, Period: ae.Period, Width: ae.Width}
	if werr := c.JSON(ae.Status, body); werr != nil {
		s.log.Debug("rest: writing an error response", "err", werr)
	}
}
