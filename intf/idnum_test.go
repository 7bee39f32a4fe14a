package intf_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// The worked example, max-peak, and a version 1 ID, negative as an int64.
const (
	workedId   = 2705126582500361294
	negativeId = -6518245454354414514
)

// JavaScript's Number.MAX_SAFE_INTEGER + 1: a JSON number above it is read
// rounded by a JavaScript client.
const jsUnsafe = 1 << 53

func TestIdJSONIsAString(t *testing.T) {
	for _, id := range []intf.Id{0, 1, jsUnsafe + 1, workedId, negativeId, math.MaxInt64, math.MinInt64} {
		b, err := json.Marshal(id)
		require.NoError(t, err)
		assert.Equal(t, strconv.Quote(strconv.FormatInt(int64(id), 10)), string(b))

		var back intf.Id
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, id, back)
	}
}

func TestIdUnmarshalJSON(t *testing.T) {
	for in, want := range map[string]intf.Id{
		`"2705126582500361294"`:  workedId,
		`2705126582500361294`:    workedId, // a Go or Java client that sent a number
		`"-6518245454354414514"`: negativeId,
		`"11928498619355137102"`: negativeId, // the unsigned form of the same bits (/expid's idUnsigned)
		`11928498619355137102`:   negativeId,
		`"+7"`:                   7,
		` 7 `:                    7,
		`"9223372036854775807"`:  math.MaxInt64,
		`-9223372036854775808`:   math.MinInt64,
	} {
		var id intf.Id
		require.NoError(t, json.Unmarshal([]byte(in), &id), in)
		assert.Equal(t, want, id, in)
	}

	id := intf.Id(5)
	require.NoError(t, json.Unmarshal([]byte(`null`), &id))
	assert.Equal(t, intf.Id(5), id, "null leaves the value, as encoding/json does")

	for _, in := range []string{
		`""`, `"x"`, `"1.0"`, `1.0`, `1e18`, `"0x10"`, `" 1"`, `true`, `{}`, `[]`, `"18446744073709551616"`,
		`18446744073709551616`, `"-9223372036854775809"`, `"--1"`, `"1\u0000"`,
	} {
		var id intf.Id
		err := json.Unmarshal([]byte(in), &id)
		require.Error(t, err, in)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, in)
		assert.Zero(t, id, "%s: a refused value leaves the ID as it was", in)
	}
	var id2 intf.Id
	err := json.Unmarshal([]byte(`"18446744073709551616"`), &id2)
	assert.ErrorIs(t, err, strconv.ErrRange, "a number beyond 64 bits says so")
	assert.Contains(t, err.Error(), `invalid argument: ID "18446744073709551616": value out of range`)
}

// In a struct, a map key and a slice, as a program keeps IDs.
func TestIdInStructsAndMaps(t *testing.T) {
	type order struct {
		ID    intf.Id            `json:"id"`
		Items []intf.Id          `json:"items"`
		Seen  map[intf.Id]string `json:"seen"`
	}
	in := order{ID: workedId, Items: []intf.Id{1, negativeId}, Seen: map[intf.Id]string{workedId: "a"}}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"2705126582500361294","items":["1","-6518245454354414514"],"seen":{"2705126582500361294":"a"}}`, string(b))
	var out order
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, out)
}

func TestIdFieldsAndTime(t *testing.T) {
	id := intf.Id(workedId)
	fields, layout := intf.Decode(workedId)
	assert.Equal(t, fields, id.Fields())
	assert.Equal(t, intf.MaxPeak, layout.Type)
	assert.Equal(t, "2705126582500361294", id.String())
	assert.Equal(t, time.Date(2026, 10, 13, 14, 56, 45, 0, time.UTC), id.Time(intf.DefaultEpochMillis))
	assert.Equal(t, layout.Instant(0, fields.Time), id.Time(0), "the epoch given is the one used")

	ms, _, err := intf.Encode(intf.IdFields{Time: 1234, Type: 1})
	require.NoError(t, err)
	assert.Equal(t, time.UnixMilli(intf.DefaultEpochMillis+1234).UTC(), intf.Id(ms).Time(intf.DefaultEpochMillis),
		"min-granularity counts milliseconds")
}

func TestParseId(t *testing.T) {
	id, err := intf.ParseId("11928498619355137102")
	require.NoError(t, err)
	assert.Equal(t, intf.Id(negativeId), id)
	_, err = intf.ParseId("12abc")
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.ErrorIs(t, err, strconv.ErrSyntax)
	assert.Equal(t, `invalid argument: ID "12abc": invalid syntax`, err.Error())
	_, err = intf.ParseId(strings.Repeat("x", 1000))
	assert.Less(t, len(err.Error()), 200, "a long input is quoted shortened")
	assert.False(t, errors.Is(err, strconv.ErrRange))
}

// An ID in a struct that goes to JSON arrives in JavaScript as a string,
// exactly; a bare int64 above 2^53 would be rounded there.
func ExampleId() {
	type order struct {
		ID   intf.Id `json:"id"`
		Item string  `json:"item"`
	}
	b, _ := json.Marshal(order{ID: 2705126582500361294, Item: "book"})
	fmt.Println(string(b))

	var o order // a number is read too, from clients that send one
	_ = json.Unmarshal([]byte(`{"id":2705126582500361294,"item":"pen"}`), &o)
	fmt.Println(int64(o.ID), o.Item)
	// Output:
	// {"id":"2705126582500361294","item":"book"}
	// 2705126582500361294 pen
}

// Time reads the ID's time with the pure codec: no service is needed.
func ExampleId_Time() {
	id := intf.Id(2705126582500361294)
	fmt.Println(id.Time(intf.DefaultEpochMillis))
	fmt.Println(id.Fields(), intf.IdType(id.Fields().Type))
	// Output:
	// 2026-10-13 14:56:45 +0000 UTC
	// {machine:78 seq:498081 time:371861805 genMethod:2 type:0 version:0} max-peak
}

// ParseId takes both decimal forms of a version 1 ID.
func ExampleParseId() {
	a, _ := intf.ParseId("-6518245454354414514")
	b, _ := intf.ParseId("11928498619355137102")
	fmt.Println(a == b, a)
	_, err := intf.ParseId("12abc")
	fmt.Println(err)
	// Output:
	// true -6518245454354414514
	// invalid argument: ID "12abc": invalid syntax
}

// Random IDs of both signs go through String, text and JSON and come back.
func TestIdRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		id := intf.Id(r.Uint64())
		if r.IntN(2) == 0 {
			id = -id
		}
		back, err := intf.ParseId(id.String())
		require.NoError(t, err)
		require.Equal(t, id, back, "String")
		assert.Equal(t, strconv.FormatInt(int64(id), 10), id.String())

		txt, err := id.MarshalText()
		require.NoError(t, err)
		var fromText intf.Id
		require.NoError(t, fromText.UnmarshalText(txt))
		require.Equal(t, id, fromText, "text")

		js, err := json.Marshal(id)
		require.NoError(t, err)
		require.Equal(t, `"`+id.String()+`"`, string(js))
		var fromJSON, fromNumber intf.Id
		require.NoError(t, json.Unmarshal(js, &fromJSON))
		require.Equal(t, id, fromJSON, "JSON string")
		require.NoError(t, json.Unmarshal([]byte(id.String()), &fromNumber))
		require.Equal(t, id, fromNumber, "JSON number")
		unsigned := strconv.FormatUint(uint64(id), 10)
		require.NoError(t, json.Unmarshal([]byte(unsigned), &fromNumber))
		require.Equal(t, id, fromNumber, "the unsigned form of the same bits")
	}
}

// The refusals say what was wrong.
func TestIdUnmarshalJSONErrors(t *testing.T) {
	for in, want := range map[string]string{
		`""`:                   `invalid argument: ID "": invalid syntax`,
		`1.5`:                  `invalid argument: ID "1.5": invalid syntax`,
		`1e18`:                 `invalid argument: ID "1e18": invalid syntax`,
		`"abc"`:                `invalid argument: ID "abc": invalid syntax`,
		`true`:                 `invalid argument: ID "true": invalid syntax`,
		`18446744073709551616`: `invalid argument: ID "18446744073709551616": value out of range`,
		`-9223372036854775809`: `invalid argument: ID "-9223372036854775809": value out of range`,
	} {
		var id intf.Id
		err := json.Unmarshal([]byte(in), &id)
		require.Error(t, err, in)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, in)
		assert.Equal(t, want, err.Error(), in)
	}
}

// Time reads the time field in the ID's own layout: seconds for max-peak,
// milliseconds for min-granularity, from the epoch given.
func TestIdTimeAgainstTheLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
		l := mustLayout(t, typ)
		for range 1000 {
			f := intf.IdFields{Machine: r.Int64N(l.Machine.Max() + 1), Seq: r.Int64N(l.Seq.Max() + 1),
				Time: r.Int64N(l.Time.Max() + 1), GenMethod: r.Int64N(4), Type: int64(typ), Version: r.Int64N(2)}
			id, _, err := intf.Encode(f)
			require.NoError(t, err)
			epoch := intf.DefaultEpochMillis - r.Int64N(intf.DefaultEpochMillis)
			want := time.UnixMilli(epoch + f.Time*l.Unit.Milliseconds()).UTC()
			require.Equal(t, want, id.Time(epoch), "%s %+v", typ, f)
			require.Equal(t, l.Instant(epoch, f.Time), id.Time(epoch))
		}
	}
}

// No input makes ParseId or UnmarshalJSON panic; whatever they accept is
// at most 20 characters long and writes back to the same ID.
func FuzzIdParse(f *testing.F) {
	for _, s := range []string{"0", "-1", "2705126582500361294", "11928498619355137102", "+7", "", "1e3",
		`"1"`, "null", "18446744073709551616", "-9223372036854775808", " 1", "\"\\u0031\"", "000000000000000000001",
		"+18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := intf.ParseId(s); err == nil {
			if len(s) > 20 {
				t.Fatalf("ParseId(%q) = %d: %d characters, past the longest ID's 20", s, id, len(s))
			}
			back, err := intf.ParseId(id.String())
			if err != nil || back != id {
				t.Fatalf("ParseId(%q) = %d, and its String %q reads back %d, %v", s, id, id.String(), back, err)
			}
		} else if !errors.Is(err, intf.ErrInvalidArgument) {
			t.Fatalf("ParseId(%q): %v does not match ErrInvalidArgument", s, err)
		}
		var id intf.Id
		if err := id.UnmarshalJSON([]byte(s)); err != nil {
			if !errors.Is(err, intf.ErrInvalidArgument) {
				t.Fatalf("UnmarshalJSON(%q): %v does not match ErrInvalidArgument", s, err)
			}
			if id != 0 {
				t.Fatalf("UnmarshalJSON(%q) failed but set the ID to %d", s, id)
			}
			return
		}
		b, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		var back intf.Id
		if err := json.Unmarshal(b, &back); err != nil || back != id {
			t.Fatalf("UnmarshalJSON(%q) = %d, its JSON %s reads back %d, %v", s, id, b, back, err)
		}
	})
}
