package rpcapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vesta-go/vesta/intf"
)

// Code classifies an error on the wire. Its numbers are part of the
// protocol: never renumber them.
type Code int

// The codes; each but CodeInternal stands for one sentinel error.
const (
	CodeInvalidArgument  Code = 1  // intf.ErrInvalidArgument (Field may name the parameter)
	CodeTimeOverflow     Code = 2  // intf.ErrTimeOverflow
	CodeClockBehind      Code = 3  // intf.ErrClockBehind
	CodeNotPersisted     Code = 4  // intf.ErrNotPersisted
	CodeClosed           Code = 5  // intf.ErrClosed
	CodeUnavailable      Code = 6  // intf.ErrUnavailable
	CodeDeadlineExceeded Code = 7  // context.DeadlineExceeded
	CodeCanceled         Code = 8  // context.Canceled
	CodeInternal         Code = 9  // anything else
	CodeUnknownTag       Code = 10 // intf.ErrUnknownTag
	CodeSegmentOff       Code = 11 // ErrSegmentOff
	CodeUnauthenticated  Code = 12 // intf.ErrUnauthenticated
	CodePermissionDenied Code = 13 // intf.ErrPermissionDenied (Denied names the scope)
	CodeRateLimited      Code = 14 // intf.ErrRateLimited (Limit says when to retry)
	CodePeriodExhausted  Code = 15 // intf.ErrPeriodExhausted (Period names the tag, the period and the width)
)

// ErrSegmentOff: the server runs without segment mode (segmentStore off),
// so it has no segment IDs to give.
var ErrSegmentOff = errors.New("segment mode is off on the server (segmentStore off)")

// ErrProtocol: the server's reply does not fit the call (e.g. another
// number of IDs than asked for). It comes inside a *TransportError.
var ErrProtocol = errors.New("malformed reply")

// ErrBroken: an earlier send on the connection failed, so it carries no
// more calls. It comes inside a *TransportError.
var ErrBroken = errors.New("connection broken by an earlier failed send")

var codeErrs = []struct {
	code Code
	err  error
}{
	{CodeInvalidArgument, intf.ErrInvalidArgument},
	{CodeTimeOverflow, intf.ErrTimeOverflow},
	{CodeClockBehind, intf.ErrClockBehind},
	{CodeNotPersisted, intf.ErrNotPersisted},
	{CodeClosed, intf.ErrClosed},
	{CodeUnavailable, intf.ErrUnavailable},
	{CodeDeadlineExceeded, context.DeadlineExceeded},
	{CodeCanceled, context.Canceled},
	{CodeUnknownTag, intf.ErrUnknownTag},
	{CodeSegmentOff, ErrSegmentOff},
	{CodeUnauthenticated, intf.ErrUnauthenticated},
	{CodePermissionDenied, intf.ErrPermissionDenied},
	{CodeRateLimited, intf.ErrRateLimited},
	{CodePeriodExhausted, intf.ErrPeriodExhausted},
}

// CodeOf returns the code of err: the first sentinel it matches, else
// CodeInternal.
func CodeOf(err error) Code {
	for _, ce := range codeErrs {
		if errors.Is(err, ce.err) {
			return ce.code
		}
	}
	return CodeInternal
}

// Sentinel returns the error a code stands for; nil for CodeInternal and
// unknown codes.
func (c Code) Sentinel() error {
	for _, ce := range codeErrs {
		if ce.code == c {
			return ce.err
		}
	}
	return nil
}

// codeNames are the codes' metric labels (server-rpc's admin listener).
var codeNames = map[Code]string{
	CodeInvalidArgument: "invalid_argument", CodeTimeOverflow: "time_overflow", CodeClockBehind: "clock_behind",
	CodeNotPersisted: "not_persisted", CodeClosed: "closed", CodeUnavailable: "unavailable",
	CodeDeadlineExceeded: "deadline_exceeded", CodeCanceled: "canceled", CodeInternal: "internal",
	CodeUnknownTag: "unknown_tag", CodeSegmentOff: "segment_off", CodeUnauthenticated: "unauthenticated",
	CodePermissionDenied: "permission_denied", CodeRateLimited: "rate_limited", CodePeriodExhausted: "period_exhausted",
}

// Name is the code as a metric label: snake case, e.g. "unavailable";
// "code_N" for a code this version does not know.
func (c Code) Name() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return "code_" + strconv.Itoa(int(c))
}

func (c Code) String() string {
	if s := c.Sentinel(); s != nil {
		return s.Error()
	}
	if c == CodeInternal {
		return "internal error"
	}
	return "code " + strconv.Itoa(int(c))
}

// Error is an error as a reply carries it. On the client it is the error
// the call returns: errors.Is matches the sentinel of its Code, and
// errors.As finds Field as an *intf.FieldError, Tag as an *intf.TagError,
// Denied as an *intf.ScopeError, Limit as an *intf.RateLimitError and
// Period as an *intf.PeriodExhaustedError.
type Error struct {
	Code    Code
	Message string           // the server's err.Error()
	Field   *intf.FieldError // the parameter at fault, if the server named one
	Tag     *intf.TagError   // the malformed segment tag, if that was the fault
	Denied  *intf.ScopeError // the scope the caller lacked
	Limit   *intf.RateLimitError
	Period  *intf.PeriodExhaustedError // a period tag's used-up period
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel of the code, and the field or tag error, if
// any.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if s := e.Code.Sentinel(); s != nil {
		errs = append(errs, s)
	}
	if e.Field != nil {
		errs = append(errs, e.Field)
	}
	if e.Tag != nil {
		errs = append(errs, e.Tag)
	}
	if e.Denied != nil {
		errs = append(errs, e.Denied)
	}
	if e.Limit != nil {
		errs = append(errs, e.Limit)
	}
	if e.Period != nil {
		errs = append(errs, e.Period)
	}
	return errs
}

// ToWire turns err into its wire form; nil stays nil. Whatever of the
// caller's input an error quotes is bounded (see quoteLimit): a malformed
// 100 KB tag comes back as its first bytes and its length, not four
// copies of it.
func ToWire(err error) *Error {
	if err == nil {
		return nil
	}
	e := &Error{Code: CodeOf(err), Message: err.Error()}
	var fe *intf.FieldError
	if errors.As(err, &fe) {
		f := *fe
		e.Field = &f
	}
	var te *intf.TagError
	if errors.As(err, &te) {
		tc := *te
		if len(tc.Tag) > quoteLimit {
			short := Bounded(tc.Tag)
			// The message quotes the tag raw or escaped (%q).
			q := strconv.Quote(tc.Tag)
			e.Message = strings.ReplaceAll(e.Message, q[1:len(q)-1], short)
			e.Message = strings.ReplaceAll(e.Message, tc.Tag, short)
			tc.Tag = short
		}
		e.Tag = &tc
	}
	var se *intf.ScopeError
	if errors.As(err, &se) {
		sc := *se
		e.Denied = &sc
	}
	var rl *intf.RateLimitError
	if errors.As(err, &rl) {
		lc := *rl
		e.Limit = &lc
	}
	var pe *intf.PeriodExhaustedError
	if errors.As(err, &pe) {
		pc := *pe
		e.Period = &pc
	}
	if len(e.Message) > maxMessage {
		e.Message = boundTo(e.Message, maxMessage)
	}
	return e
}

// quoteLimit is the most of one piece of caller input an error quotes;
// maxMessage bounds a whole message, whatever else it quotes.
const (
	quoteLimit = 64
	maxMessage = 1024
)

// Bounded returns s if it is at most quoteLimit bytes, else its first
// quoteLimit bytes (cut at a character boundary) and its length:
// "abc…(100000 bytes)".
func Bounded(s string) string {
	if len(s) <= quoteLimit {
		return s
	}
	return boundTo(s, quoteLimit)
}

func boundTo(s string, n int) string {
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// errOf returns the reply's error as an error value: nil when there is none
// (never a typed nil).
func errOf(e *Error) error {
	if e == nil {
		return nil
	}
	return e
}

// TransportError is a call that got no answer: the connection broke, the
// server went away, or it could not be reached. It matches
// intf.ErrUnavailable under errors.Is; Err is the cause.
type TransportError struct {
	Method string
	Err    error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("vesta rpc %s: %v", e.Method, e.Err)
}

// Unwrap returns the cause and intf.ErrUnavailable.
func (e *TransportError) Unwrap() []error { return []error{e.Err, intf.ErrUnavailable} }
