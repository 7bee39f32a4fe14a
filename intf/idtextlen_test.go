package intf_test

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// textCap is the longest text each form reads: its longest ID's text.
// Friendly reads only the exact text of an ID, so its bound is that.
var textCap = map[intf.Form]int{
	intf.FormDec: 20, intf.FormBase62: 11, intf.FormBase58: 11, intf.FormBase36: 13, intf.FormSortable: 11,
}

// zeroDigit is the digit of value 0 in each base form.
var zeroDigit = map[intf.Form]string{
	intf.FormDec: "0", intf.FormBase62: "0", intf.FormBase58: "1", intf.FormBase36: "0", intf.FormSortable: "0",
}

// The longest IDs' texts are exactly the caps, and they read.
func TestTextCapsAreTheLongestIds(t *testing.T) {
	for f, n := range textCap {
		longest := 0
		for _, id := range []intf.Id{-1, math.MinInt64, math.MaxInt64} {
			longest = max(longest, len(id.Format(f)))
		}
		if f == intf.FormDec {
			longest = max(longest, len("18446744073709551615")) // -1 unsigned
		}
		assert.Equal(t, n, longest, "%s", f)
	}
}

// A text longer than its form's longest ID is refused whatever its digits,
// zeros too (15,000 "1"s in base 58 must not read as ID 0); within the cap,
// leading zeros are padding.
func TestTextLongerThanTheCapIsRefused(t *testing.T) {
	for f, n := range textCap {
		z := zeroDigit[f]
		for _, s := range []string{strings.Repeat(z, n+1), strings.Repeat(z, n) + "1", strings.Repeat(z, 15_000)} {
			_, err := intf.ParseIdAs(s, f)
			require.Error(t, err, "%s: %d characters", f, len(s))
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.ErrorIs(t, err, intf.ErrIdTooLong)
			assert.Less(t, len(err.Error()), 200, "the input is quoted shortened")
			assert.Contains(t, err.Error(), "too long")
		}
		seven := intf.Id(7).Format(f)
		id, err := intf.ParseIdAs(strings.Repeat(z, n-1)+seven[len(seven)-1:], f)
		require.NoError(t, err, "%s: padded to %d characters", f, n)
		assert.Equal(t, intf.Id(7), id, "%s", f)
	}
	for _, s := range []string{"-0000000000000000007", "+0000000000000000007"} {
		id, err := intf.ParseId(s)
		require.NoError(t, err, "%q: 20 characters with the sign", s)
		assert.Equal(t, s[0] == '-', id < 0)
	}
	for _, s := range []string{"+18446744073709551615", "-00000000000000000007", "000000000000000000007"} {
		_, err := intf.ParseId(s)
		assert.ErrorIs(t, err, intf.ErrIdTooLong, "%q", s)
	}
	var id intf.Id
	assert.ErrorIs(t, id.UnmarshalJSON([]byte(`"`+strings.Repeat("0", 21)+`"`)), intf.ErrIdTooLong)
}

// canonical is the text form f writes for the ID that s (which ParseIdAs
// read) stands for: the padding dropped, base 36 in lower case; decimal
// is checked by value instead.
func canonical(s string, f intf.Form) string {
	if f == intf.FormBase36 {
		s = strings.ToLower(s)
	}
	if f == intf.FormSortable {
		return s
	}
	t := strings.TrimLeft(s, zeroDigit[f])
	if t == "" {
		return zeroDigit[f]
	}
	return t
}

// decimalValue is s, a decimal integer with an optional sign, modulo 2^64.
func decimalValue(t *testing.T, s string) uint64 {
	v, ok := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10)
	if !ok {
		t.Fatalf("ParseId took %q, which is no decimal integer", s)
	}
	return new(big.Int).And(v, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
}

// The parsers take any input without a panic; what they take is no
// longer than its form's longest ID, stands for the ID its digits say,
// and is the form's own text of that ID but for padding (see canonical).
func FuzzParseIdAs(f *testing.F) {
	for _, id := range randomIds(f, 20, 9) {
		for _, form := range intf.Forms {
			f.Add(id.Format(form), string(form))
		}
	}
	for form, n := range textCap {
		z := zeroDigit[form]
		f.Add(strings.Repeat(z, n), string(form))
		f.Add(strings.Repeat(z, n+1), string(form))
		f.Add(strings.Repeat(z, 300), string(form))
		f.Add(strings.Repeat(z, n-2)+"7", string(form))
	}
	f.Add("+18446744073709551615", "dec")
	f.Add("-0000000000000000007", "dec")
	f.Add("00ZZ", "base36")
	f.Fuzz(func(t *testing.T, s, form string) {
		fm := intf.Form(form)
		id, err := intf.ParseIdAs(s, fm)
		if err != nil {
			if !errors.Is(err, intf.ErrInvalidArgument) {
				t.Fatalf("%s %q: %v does not match ErrInvalidArgument", form, s, err)
			}
			if n, ok := textCap[fm]; ok && len(s) > n && !errors.Is(err, intf.ErrIdTooLong) {
				t.Fatalf("%s %q: %d characters refused for %v, not as too long", form, s, len(s), err)
			}
			return
		}
		out := id.Format(fm)
		if again, err := intf.ParseIdAs(out, fm); err != nil || again != id {
			t.Fatalf("%s %q -> %d -> %q -> %d, %v", form, s, id, out, again, err)
		}
		switch {
		case fm == intf.FormFriendly:
			if out != s {
				t.Fatalf("friendly %q read as %d, which writes %q", s, id, out)
			}
		case len(s) > textCap[fm]:
			t.Fatalf("%s %q: %d characters read, past the cap %d", form, s, len(s), textCap[fm])
		case fm == intf.FormDec:
			if decimalValue(t, s) != uint64(id) {
				t.Fatalf("dec %q read as %d", s, id)
			}
		case out != canonical(s, fm):
			t.Fatalf("%s %q read as %d, which writes %q, not %q", form, s, id, out, canonical(s, fm))
		}
	})
}
