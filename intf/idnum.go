package intf

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Id is an ID: the 64-bit number the services issue, packed from its
// fields (Fields splits it, Encode builds one). Its String and text form
// are the signed decimal the servers write; its JSON is a string
// ("2705126582500361294"), because JavaScript reads a JSON number above
// 2^53 rounded and would turn an ID into another one, and it reads back
// from a string or a number. int64(id) and Id(n) convert without cost,
// and gob carries it as an int64.
//
// It is what bwmarrin/snowflake calls ID.
type Id int64

// ParseId reads an ID in decimal, signed or unsigned: a version 1 ID
// is negative as an int64 (Java's long), and its unsigned form
// (2^63..2^64-1, as /expid's idUnsigned gives it) stands for the same 64
// bits. Anything else is an error matching ErrInvalidArgument, and
// strconv.ErrRange when the number needs more than 64 bits, or
// ErrIdTooLong when s has more than 20 characters (the longest ID's,
// -9223372036854775808): leading zeros within them read.
func ParseId(s string) (Id, error) {
	if err := checkTextLen(s, FormDec); err != nil {
		return 0, fmt.Errorf("%w: ID %s: %w", ErrInvalidArgument, quoteId(s), err)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		return Id(v), nil
	}
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-") {
		if u, uerr := strconv.ParseUint(strings.TrimPrefix(s, "+"), 10, 64); uerr == nil {
			return Id(u), nil
		}
	}
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		err = ne.Err // strconv.ErrSyntax or ErrRange; the input is quoted once
	}
	return 0, fmt.Errorf("%w: ID %s: %w", ErrInvalidArgument, quoteId(s), err)
}

// quoteId quotes s for an error, shortened: an ID has at most 20 digits.
func quoteId(s string) string {
	const max = 40
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// String is the ID in signed decimal, as the servers write it.
func (id Id) String() string { return strconv.FormatInt(int64(id), 10) }

// Fields splits the ID into its fields by the layout its own type bit
// names: Decode without the layout, so that id.Fields().Machine reads.
func (id Id) Fields() IdFields {
	f, _ := Decode(id)
	return f
}

// Time is the instant the ID's time field stands for, with the epoch in
// Unix milliseconds (DefaultEpochMillis unless the issuing service was
// given another), in UTC, read in the ID's own layout. The epoch is an
// argument because a service may be set up with another one
// (service.Settings.EpochMillis).
func (id Id) Time(epochMillis int64) time.Time {
	l := layoutOf(id)
	return l.Instant(epochMillis, l.Time.Get(uint64(id)))
}

// MarshalJSON writes the ID as a JSON string of its signed decimal.
func (id Id) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 22)
	b = append(b, '"')
	b = strconv.AppendInt(b, int64(id), 10)
	return append(b, '"'), nil
}

// UnmarshalJSON reads a JSON string or number holding a decimal ID, in
// either form ParseId accepts. null leaves the ID as it is, as
// encoding/json does for other types. A number with a fraction or an
// exponent is refused: IDs are integers, and 1e18 is no way to write one.
func (id *Id) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		var err error
		if s, err = strconv.Unquote(s); err != nil {
			return fmt.Errorf("%w: ID %s: not a JSON string", ErrInvalidArgument, quoteId(string(b)))
		}
	}
	v, err := ParseId(s)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// MarshalText writes the ID in signed decimal, so that it is a string in
// every text format (and a map key in JSON).
func (id Id) MarshalText() ([]byte, error) { return strconv.AppendInt(nil, int64(id), 10), nil }

// UnmarshalText reads what ParseId reads.
func (id *Id) UnmarshalText(b []byte) error {
	v, err := ParseId(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}
