package rpcserver

import (
	"bytes"
	"encoding/gob"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGobInt(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		want int64
		n    int
	}{
		{[]byte{0x10}, 8, 1},
		{[]byte{0x0b}, -6, 1},
		{[]byte{0xff, 0x81}, -65, 2},
		{[]byte{0xfe, 0x01, 0x00, 0x99}, 128, 3},
		{[]byte{0xfe, 0x01}, 0, 0}, // truncated
		{[]byte{0xf7}, 0, 0},       // 9 bytes: not gob's
		{nil, 0, 0},
	} {
		got, n := gobInt(tc.b)
		assert.Equal(t, tc.n, n, "% x", tc.b)
		assert.Equal(t, tc.want, got, "% x", tc.b)
	}
}

// typeDefs are the definitions (after their type id) gob writes to send v.
func typeDefs(t *testing.T, v any) [][]byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, gob.NewEncoder(&buf).Encode(v))
	var defs [][]byte
	for b := buf.Bytes(); len(b) > 0; {
		size, n := gobUint(b)
		require.NotZero(t, n)
		msg := b[n : n+int(size)]
		b = b[n+int(size):]
		if id, n := gobInt(msg); id < 0 {
			defs = append(defs, msg[n:])
		}
	}
	return defs
}

type inner struct {
	A []string
	M map[int64][2]float64
	T time.Time // a GobEncoder
}

type outer struct {
	Name string
	In   inner
	P    *inner
	S    []inner
}

type withAny struct {
	N int
	X any
}

func TestCheckTypeDef(t *testing.T) {
	defs := typeDefs(t, outer{S: []inner{{}}})
	require.Len(t, defs, 7, "outer, inner, []string, map, [2]float64, time.Time, []inner")
	for _, d := range defs {
		assert.NoError(t, checkTypeDef(d))
	}
	for _, v := range []any{withAny{}, []any{1}, map[string]any{"a": 1}, [1]any{1}} {
		defs := typeDefs(t, v)
		require.NotEmpty(t, defs, "%T", v)
		assert.ErrorIs(t, checkTypeDef(defs[len(defs)-1]), ErrInterfaceType, "%T", v)
	}
	d := typeDefs(t, outer{})[0]
	for _, bad := range [][]byte{d[:len(d)-1], append(append([]byte{}, d...), 0), {0x09, 0}, {0x01, 0x01, 0x05, 'a'}} {
		assert.ErrorIs(t, checkTypeDef(bad), errBadTypeDef, "% x", bad)
	}
}
