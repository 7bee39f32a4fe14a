package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// A segmentDSN PostgreSQL's parser refuses stops Setup, before anything
// starts, naming the key and where it was set.
func TestSetupRefusesABadSegmentDSN(t *testing.T) {
	_, err := setup(t, "--segment-store", "postgres", "--segment-dsn", "host=db port=notaport dbname=vesta")
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.ErrorContains(t, err, `config key segmentDSN: "(not shown: it may hold a password)" from flag --segment-dsn: want a PostgreSQL URL or key=value DSN`)

	_, err = setup(t, "--segment-store", "postgres", "--segment-dsn", "postgres://ids@db:5432/vesta")
	require.NoError(t, err)
}
