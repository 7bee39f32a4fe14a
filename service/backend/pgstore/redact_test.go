package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/backend/pgstore"
)

// An unreachable database's error names neither its user nor its name:
// it reaches the REST and RPC clients (a 503's body).
func TestErrorsNameNoDatabaseUser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := pgstore.OpenOptions(ctx, "postgres://secretuser@127.0.0.1:1/secretdb?sslmode=disable&connect_timeout=2", pgstore.Options{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "secretuser")
	assert.NotContains(t, err.Error(), "secretdb")
	assert.Contains(t, err.Error(), "127.0.0.1:1", "it names the server")
	var ce *pgconn.ConnectError
	assert.ErrorAs(t, err, &ce, "the cause is kept for errors.As")
}
