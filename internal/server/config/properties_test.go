package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPropertiesDecode(t *testing.T) {
	in := "# comment\n! also a comment\n\n" +
		"vesta.machine=12\n" +
		"vesta.genMethod : 1\n" +
		"vesta.type 0\n" +
		"vesta.ips = 10.0.0.1,\\\n    10.0.0.2\n" +
		"  listen=\\u003a8081\n" +
		"a\\=b=c\\td\r\n"
	out := map[string]any{}
	require.NoError(t, propertiesCodec{}.Decode([]byte(in), out))
	assert.Equal(t, map[string]any{
		"vesta":  map[string]any{"machine": "12", "genMethod": "1", "type": "0", "ips": "10.0.0.1,10.0.0.2"},
		"listen": ":8081",
		"a=b":    "c\td",
	}, out)
}

func TestPropertiesDecodeErrors(t *testing.T) {
	for _, in := range []string{"a=1\na.b=2\n", "a.b=2\na=1\n", "a=\\u12\n", "a=\\uzzzz\n", ". 0\n", "a..b=1\n", ".a=1\n", "a.=1\n"} {
		assert.Error(t, propertiesCodec{}.Decode([]byte(in), map[string]any{}), in)
	}
	_, err := propertiesCodec{}.Encode(nil)
	assert.Error(t, err)
}
