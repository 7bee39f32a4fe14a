package intf

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Form is a string form of an ID. Every form reads back to the same 64
// bits (ParseIdAs); the base forms write the ID's unsigned value, so a
// version 1 ID (negative as an int64) has no sign in them.
type Form string

const (
	// FormDec is the signed decimal (Id.String): the servers' default.
	FormDec Form = "dec"
	// FormBase62 is the unsigned value in base 62 (0-9A-Za-z), shortest.
	FormBase62 Form = "base62"
	// FormBase58 is the unsigned value in Bitcoin's base 58 (no 0, O, I,
	// l), shortest.
	FormBase58 Form = "base58"
	// FormBase36 is the unsigned value in base 36 (0-9a-z), shortest; it
	// reads back in either case.
	FormBase36 Form = "base36"
	// FormSortable is the unsigned value in base 62, always 11
	// characters: byte order is numeric order (of the unsigned value,
	// which is the IDs' order among non-negative ones), for a string key.
	FormSortable Form = "sortable"
	// FormFriendly is the ID's time in UTC, then its machine and
	// sequence, and its genMethod and version when not 0, e.g.
	// 2026-11-27T19:58:11.123Z_m17_s4211: the time has milliseconds
	// exactly when the ID is of type min-granularity, so the form says
	// the type too. It reads with DefaultEpochMillis (FriendlyAt and
	// ParseFriendlyAt take another epoch).
	FormFriendly Form = "friendly"
)

// Forms are every form, in the order docs list them.
var Forms = []Form{FormDec, FormBase62, FormBase58, FormBase36, FormSortable, FormFriendly}

// ParseForm reads a form's name; an unknown name is an error matching
// ErrInvalidArgument that names "format" and the forms known.
func ParseForm(name string) (Form, error) {
	for _, f := range Forms {
		if string(f) == name {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w: format %s: want one of %v", ErrInvalidArgument, quoteId(name), Forms)
}

const (
	alphabet62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	alphabet58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	alphabet36 = "0123456789abcdefghijklmnopqrstuvwxyz"
	// sortableLen is the base 62 digits of 2^64-1: 62^11 > 2^64 > 62^10.
	sortableLen = 11
)

// digitValues maps a byte to its value in an alphabet (-1: not a digit).
func digitValues(alphabet string, foldCase bool) (v [256]int8) {
	for i := range v {
		v[i] = -1
	}
	for i := range len(alphabet) {
		v[alphabet[i]] = int8(i)
		if foldCase && alphabet[i] >= 'a' && alphabet[i] <= 'z' {
			v[alphabet[i]-'a'+'A'] = int8(i)
		}
	}
	return v
}

var (
	values62 = digitValues(alphabet62, false)
	values58 = digitValues(alphabet58, false)
	values36 = digitValues(alphabet36, true)
)

// FriendlyAt is the ID in FormFriendly with the epoch in Unix
// milliseconds (the issuing service's, service.Settings.EpochMillis).
func (id Id) FriendlyAt(epochMillis int64) string {
	f, l := Decode(id)
	layout := time.RFC3339
	if l.Type == MinGranularity {
		layout = "2006-01-02T15:04:05.000Z07:00"
	}
	s := l.Instant(epochMillis, f.Time).Format(layout) + "_m" + strconv.FormatInt(f.Machine, 10) + "_s" + strconv.FormatInt(f.Seq, 10)
	if f.GenMethod != 0 {
		s += "_g" + strconv.FormatInt(f.GenMethod, 10)
	}
	if f.Version != 0 {
		s += "_v" + strconv.FormatInt(f.Version, 10)
	}
	return s
}

// Format is the ID in form f (FormFriendly with DefaultEpochMillis); an
// unknown form writes the decimal.
func (id Id) Format(f Form) string {
	switch f {
	case FormBase62:
		return encodeBase(uint64(id), alphabet62, 0)
	case FormBase58:
		return encodeBase(uint64(id), alphabet58, 0)
	case FormBase36:
		return encodeBase(uint64(id), alphabet36, 0)
	case FormSortable:
		return encodeBase(uint64(id), alphabet62, sortableLen)
	case FormFriendly:
		return id.FriendlyAt(DefaultEpochMillis)
	}
	return id.String()
}

// ErrIdTooLong: an ID's text is longer than any ID's in its form (see
// ParseIdAs). It comes wrapped in an error matching ErrInvalidArgument.
var ErrIdTooLong = errors.New("too long")

// maxTextLen is the longest text each form reads: the longest it writes,
// 2^64-1 in the base forms, -9223372036854775808 (or the unsigned
// 18446744073709551615) in decimal. FormFriendly reads only the exact
// text FriendlyAt writes, so it needs no bound of its own.
var maxTextLen = map[Form]int{
	FormDec:      len(strconv.FormatInt(math.MinInt64, 10)),      // 20
	FormBase62:   len(encodeBase(math.MaxUint64, alphabet62, 0)), // 11
	FormBase58:   len(encodeBase(math.MaxUint64, alphabet58, 0)), // 11
	FormBase36:   len(encodeBase(math.MaxUint64, alphabet36, 0)), // 13
	FormSortable: sortableLen,                                    // 11
}

// checkTextLen refuses s longer than any ID's text in form f.
func checkTextLen(s string, f Form) error {
	if max, ok := maxTextLen[f]; ok && len(s) > max {
		return fmt.Errorf("%w: %d characters, where the longest %s ID has %d", ErrIdTooLong, len(s), f, max)
	}
	return nil
}

// ParseIdAs reads s in form f, which the caller names (a decimal string
// is also valid base 62): FormFriendly with DefaultEpochMillis. An s that
// is not valid in f is an error matching ErrInvalidArgument that quotes
// it; a value past 64 bits also matches strconv.ErrRange.
//
// No form reads a text longer than the longest it writes (decimal 20
// characters with its sign, base62 and sortable 11, base58 11, base36
// 13): such a text matches ErrIdTooLong, whatever its digits. Within that
// length, leading zero digits (0 in base 62, 36 and decimal, 1 in base
// 58) are padding and read: "0001" is ID 1 in base 62, as the sortable
// form pads it. The ID then writes back in its form's own text, without
// the padding (and base 36 in lower case, decimal without a plus sign and
// signed), which reads as the same ID.
func ParseIdAs(s string, f Form) (Id, error) {
	return parseIdAs(s, f, DefaultEpochMillis)
}

// ParseFriendlyAt reads s in FormFriendly with the epoch in Unix
// milliseconds.
func ParseFriendlyAt(s string, epochMillis int64) (Id, error) {
	return parseIdAs(s, FormFriendly, epochMillis)
}

func parseIdAs(s string, f Form, epochMillis int64) (Id, error) {
	var (
		u   uint64
		err error
	)
	if err := checkTextLen(s, f); err != nil {
		return 0, fmt.Errorf("%w: ID %s is not %s: %w", ErrInvalidArgument, quoteId(s), f, err)
	}
	switch f {
	case FormDec:
		return ParseId(s)
	case FormBase62:
		u, err = decodeBase(s, &values62, 62)
	case FormBase58:
		u, err = decodeBase(s, &values58, 58)
	case FormBase36:
		u, err = decodeBase(s, &values36, 36)
	case FormSortable:
		if len(s) != sortableLen {
			err = fmt.Errorf("want %d characters, got %d", sortableLen, len(s))
		} else {
			u, err = decodeBase(s, &values62, 62)
		}
	case FormFriendly:
		return parseFriendly(s, epochMillis)
	default:
		_, err := ParseForm(string(f))
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("%w: ID %s is not %s: %w", ErrInvalidArgument, quoteId(s), f, err)
	}
	return Id(u), nil
}

// encodeBase writes u in the alphabet's base, left-padded with its zero
// digit to width (0: shortest).
func encodeBase(u uint64, alphabet string, width int) string {
	var buf [64]byte
	i := len(buf)
	base := uint64(len(alphabet))
	for u > 0 || i == len(buf) {
		i--
		buf[i] = alphabet[u%base]
		u /= base
	}
	for len(buf)-i < width {
		i--
		buf[i] = alphabet[0]
	}
	return string(buf[i:])
}

// decodeBase reads s in base with the digit values; at least one digit,
// at most 2^64-1.
func decodeBase(s string, values *[256]int8, base uint64) (uint64, error) {
	if s == "" {
		return 0, strconv.ErrSyntax
	}
	var u uint64
	for i := range len(s) {
		d := values[s[i]]
		if d < 0 {
			return 0, fmt.Errorf("%q at %d is not a base %d digit: %w", s[i], i, base, strconv.ErrSyntax)
		}
		hi, lo := bits.Mul64(u, base)
		sum, carry := bits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 {
			return 0, strconv.ErrRange
		}
		u = sum
	}
	return u, nil
}

// parseFriendly reads FormFriendly: the time (with milliseconds: type
// min-granularity), then _m, _s and optional _g and _v fields, and takes
// only what FriendlyAt would write for the ID it stands for.
func parseFriendly(s string, epochMillis int64) (Id, error) {
	id, err := readFriendly(s, epochMillis)
	if err == nil && id.FriendlyAt(epochMillis) != s {
		err = fmt.Errorf("not in the form this ID is written: %s", id.FriendlyAt(epochMillis))
	}
	if err != nil {
		return 0, fmt.Errorf("%w: ID %s is not friendly (like 2026-11-27T19:58:11Z_m17_s4211): %w", ErrInvalidArgument, quoteId(s), err)
	}
	return id, nil
}

func readFriendly(s string, epochMillis int64) (Id, error) {
	parts := strings.Split(s, "_")
	if len(parts) < 3 || len(parts) > 5 {
		return 0, fmt.Errorf("want a time and _m, _s (and _g, _v) fields")
	}
	at, err := time.Parse(time.RFC3339Nano, parts[0])
	if err != nil {
		return 0, fmt.Errorf("time: %w", err)
	}
	l := layouts[MaxPeak]
	if strings.Contains(parts[0], ".") {
		l = layouts[MinGranularity]
	}
	unit := l.Unit.Milliseconds()
	since := at.UnixMilli() - epochMillis
	f := IdFields{Type: int64(l.Type), Time: since / unit}
	if since%unit > 0 { // an epoch off whole seconds: the instant printed was truncated (ceil; / truncates)
		f.Time++
	}
	fields := map[byte]*int64{'m': &f.Machine, 's': &f.Seq, 'g': &f.GenMethod, 'v': &f.Version}
	for _, p := range parts[1:] {
		if p == "" {
			return 0, fmt.Errorf("an empty field")
		}
		dst, ok := fields[p[0]]
		if !ok {
			return 0, fmt.Errorf("unknown or repeated field %s", quoteId(p))
		}
		delete(fields, p[0]) // each field once
		if *dst, err = strconv.ParseInt(p[1:], 10, 64); err != nil {
			return 0, fmt.Errorf("field %q: %w", p[:1], err)
		}
	}
	id, _, err := Encode(f)
	return id, err
}
