package pgstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDSN(t *testing.T) {
	cfg, err := ParseDSN("postgres://ids:secret@db.example:6543/vesta?sslmode=disable")
	require.NoError(t, err)
	assert.Equal(t, "db.example", cfg.ConnConfig.Host)
	assert.Equal(t, uint16(6543), cfg.ConnConfig.Port)
	assert.Equal(t, "vesta", cfg.ConnConfig.Database)

	cfg, err = ParseDSN("host=127.0.0.1 port=5433 dbname=ids user=u")
	require.NoError(t, err)
	assert.Equal(t, uint16(5433), cfg.ConnConfig.Port)

	for _, bad := range []string{"", "postgres://u:topsecret@host:notaport/db", "host=h port=99999999 password=topsecret"} {
		_, err := ParseDSN(bad)
		require.Error(t, err, bad)
		assert.NotContains(t, err.Error(), "topsecret", "the password is not repeated")
	}
}
