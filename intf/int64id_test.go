package intf_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

func TestInt64IdJSONIsAString(t *testing.T) {
	for _, id := range []intf.Int64Id{0, 1, jsUnsafe + 1, workedId, negativeId, math.MaxInt64, math.MinInt64} {
		b, err := json.Marshal(id)
		require.NoError(t, err)
		assert.Equal(t, strconv.Quote(strconv.FormatInt(int64(id), 10)), string(b))

		var back intf.Int64Id
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, id, back)
	}
}

func TestInt64IdUnmarshalJSON(t *testing.T) {
	for in, want := range map[string]intf.Int64Id{
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
		var id intf.Int64Id
		require.NoError(t, json.Unmarshal([]byte(in), &id), in)
		assert.Equal(t, want, id, in)
	}

	id := intf.Int64Id(5)
	require.NoError(t, json.Unmarshal([]byte(`null`), &id))
	assert.Equal(t, intf.Int64Id(5), id, "null leaves the value, as encoding/json does")

	for _, in := range []string{
		`""`, `"x"`, `"1.0"`, `1.0`, `1e18`, `"0x10"`, `" 1"`, `true`, `{}`, `[]`, `"18446744073709551616"`,
		`18446744073709551616`, `"-9223372036854775809"`, `"--1"`, `"1\u0000"`,
	} {
		var id intf.Int64Id
		err := json.Unmarshal([]byte(in), &id)
		require.Error(t, err, in)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, in)
		assert.Zero(t, id, "%s: a refused value leaves the ID as it was", in)
	}
	var id2 intf.Int64Id
	err := json.Unmarshal([]byte(`"18446744073709551616"`), &id2)
	assert.ErrorIs(t, err, strconv.ErrRange, "a number beyond 64 bits says so")
	assert.Contains(t, err.Error(), `invalid argument: ID "18446744073709551616": value out of range`)
}

// In a struct, a map key and a slice, as a program keeps IDs.
func TestInt64IdInStructsAndMaps(t *testing.T) {
	type order struct {
		ID    intf.Int64Id            `json:"id"`
		Items []intf.Int64Id          `json:"items"`
		Seen  map[intf.Int64Id]string `json:"seen"`
	}
	in := order{ID: workedId, Items: []intf.Int64Id{1, negativeId}, Seen: map[intf.Int64Id]string{workedId: "a"}}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"2705126582500361294","items":["1","-6518245454354414514"],"seen":{"2705126582500361294":"a"}}`, string(b))
	var out order
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, out)
}

func TestInt64IdDecodeAndTime(t *testing.T) {
	id := intf.Int64Id(workedId)
	fields, _ := intf.Decode(workedId)
	assert.Equal(t, fields, id.Decode())
	assert.Equal(t, int64(workedId), id.Int64())
	assert.Equal(t, "2705126582500361294", id.String())
	assert.Equal(t, time.Date(2026, 10, 13, 14, 56, 45, 0, time.UTC), id.Time(intf.DefaultEpochMillis))
	assert.Equal(t, fields.Timestamp(0), id.Time(0), "the epoch given is the one used")

	ms, err := intf.Encode(mustLayout(t, intf.MinGranularity), intf.IdFields{Time: 1234, Type: 1})
	require.NoError(t, err)
	assert.Equal(t, time.UnixMilli(intf.DefaultEpochMillis+1234).UTC(), intf.Int64Id(ms).Time(intf.DefaultEpochMillis),
		"min-granularity counts milliseconds")
}

func TestParseInt64Id(t *testing.T) {
	id, err := intf.ParseInt64Id("11928498619355137102")
	require.NoError(t, err)
	assert.Equal(t, intf.Int64Id(negativeId), id)
	_, err = intf.ParseInt64Id("12abc")
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.ErrorIs(t, err, strconv.ErrSyntax)
	assert.Equal(t, `invalid argument: ID "12abc": invalid syntax`, err.Error())
	_, err = intf.ParseInt64Id(strings.Repeat("x", 1000))
	assert.Less(t, len(err.Error()), 200, "a long input is quoted shortened")
	assert.False(t, errors.Is(err, strconv.ErrRange))
}

// An ID in a struct that goes to JSON arrives in JavaScript as a string,
// exactly; a bare int64 above 2^53 would be rounded there.
func ExampleInt64Id() {
	type order struct {
		ID   intf.Int64Id `json:"id"`
		Item string       `json:"item"`
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
func ExampleInt64Id_Time() {
	id := intf.Int64Id(2705126582500361294)
	fmt.Println(id.Time(intf.DefaultEpochMillis))
	fmt.Println(id.Decode())
	// Output:
	// 2026-10-13 14:56:45 +0000 UTC
	// {machine:78 seq:498081 time:371861805 genMethod:2 type:0 version:0}
}

// ParseInt64Id takes both decimal forms of a version 1 ID.
func ExampleParseInt64Id() {
	a, _ := intf.ParseInt64Id("-6518245454354414514")
	b, _ := intf.ParseInt64Id("11928498619355137102")
	fmt.Println(a == b, a)
	_, err := intf.ParseInt64Id("12abc")
	fmt.Println(err)
	// Output:
	// true -6518245454354414514
	// invalid argument: ID "12abc": invalid syntax
}
