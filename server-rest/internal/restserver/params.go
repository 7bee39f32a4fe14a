package restserver

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/vesta-go/vesta/intf"
)

// params is a request's query string, parsed strictly: malformed escapes
// and a parameter the endpoint reads given more than once are errors.
// Unknown parameters are ignored, repeated or not.
type params url.Values

func parseParams(rawQuery string) (params, error) {
	if rawQuery == "" {
		return nil, nil
	}
	v, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, &apiError{Status: http.StatusBadRequest, Msg: "malformed query string: " + err.Error(), Err: intf.ErrInvalidArgument}
	}
	return params(v), nil
}

// get returns the parameter's value and whether it was given; given more
// than once, it is an error.
func (p params) get(name string) (string, bool, error) {
	vs, ok := p[name]
	if !ok {
		return "", false, nil
	}
	if len(vs) > 1 {
		return "", true, badParam(name, "given %d times: give it once", len(vs))
	}
	return vs[0], true, nil
}

// int64 parses an optional decimal parameter. want describes the allowed
// values for the error message; the range itself is checked by the service.
func (p params) int64(name, want string) (v int64, given bool, err error) {
	s, given, err := p.get(name)
	if !given || err != nil {
		return 0, given, err
	}
	v, err = parseDecimal(name, s, want)
	return v, true, err
}

// required is int64 for a parameter that must be given.
func (p params) required(name, want string) (int64, error) {
	v, given, err := p.int64(name, want)
	if err == nil && !given {
		err = badParam(name, "missing: want %s", want)
	}
	return v, err
}

func parseDecimal(name, s, want string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, numberError(name, s, want, err)
	}
	return v, nil
}

// parseId accepts the signed and the unsigned decimal form of the same 64
// bits (intf.ParseId): version 1 IDs are negative as int64 (Java's
// long), and 2^63..2^64-1 written unsigned map to them.
func parseId(name, s string) (intf.Id, error) {
	id, err := intf.ParseId(s)
	if err != nil {
		return 0, numberError(name, s, idWant, err)
	}
	return id, nil
}

// idWant describes the values /expid accepts.
const idWant = "a 64-bit ID in signed (-9223372036854775808..9223372036854775807) or unsigned (0..18446744073709551615) decimal"

func numberError(name, s, want string, err error) *apiError {
	switch {
	case s == "":
		return badParam(name, "empty: want %s", want)
	case errors.Is(err, intf.ErrIdTooLong):
		return badParam(name, "%s is %d characters, longer than any ID's 20: want %s", quoteShort(s), len(s), want)
	case errors.Is(err, strconv.ErrRange):
		return badParam(name, "%s overflows 64 bits: want %s", quoteShort(s), want)
	}
	return badParam(name, "%s is not a decimal integer: want %s", quoteShort(s), want)
}

// idType parses an optional type: 0, 1, max-peak or min-granularity. A
// number outside 0..1 is passed on for the service to reject by range.
func (p params) idType(name string) (t intf.IdType, given bool, err error) {
	s, given, err := p.get(name)
	if !given || err != nil {
		return 0, given, err
	}
	if n, nerr := strconv.ParseInt(s, 10, 64); nerr == nil {
		if n != int64(intf.MaxPeak) && n != int64(intf.MinGranularity) {
			return 0, true, badParam(name, "%d is out of range 0..1: want max-peak (0) or min-granularity (1)", n)
		}
		return intf.IdType(n), true, nil
	}
	t, err = intf.ParseIdType(s)
	if err != nil {
		return 0, true, badParam(name, "%s: want max-peak (0) or min-granularity (1)", quoteShort(s))
	}
	return t, true, nil
}

// quoteShort quotes a client's value for an error message, cut to a
// sensible length.
func quoteShort(s string) string {
	const max = 40
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// fieldRange describes the values a field of layout type t allows, for
// error messages; it reads the widths from the intf layout.
func fieldRange(field string, t intf.IdType) string {
	l, err := t.Layout()
	if err != nil {
		l, _ = intf.MaxPeak.Layout()
		t = intf.MaxPeak
	}
	for _, f := range l.Fields() {
		if f.Name == field {
			r := "an integer 0.." + strconv.FormatInt(f.Max(), 10)
			if field == "seq" || field == "time" {
				r += " (type " + t.String() + ")"
			}
			return r
		}
	}
	return "an integer"
}
