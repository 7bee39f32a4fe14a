package access_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
)

// A caller without a token is told what its own door wants: an HTTP
// request the Authorization header, an RPC call (whose token comes from
// Authenticate) client.WithToken. Both are the no_token refusal.
func TestNoTokenRefusalNamesTheDoorsWay(t *testing.T) {
	g := newGuard(t, newFakeClock(), access.Client{Name: "a", Tokens: [][32]byte{sum("tok")}, Scopes: []access.Scope{"genid"}})
	var te *access.TokenError

	_, err := g.AuthenticateHeader(nil, "1.2.3.4:5")
	require.ErrorIs(t, err, intf.ErrUnauthenticated)
	assert.Contains(t, err.Error(), "send the header Authorization: Bearer <token>")
	assert.NotContains(t, err.Error(), "WithToken")
	require.True(t, errors.As(err, &te))
	assert.Equal(t, access.ReasonNoToken, te.Reason)

	_, err = g.Authenticate("", "1.2.3.4:5")
	require.ErrorIs(t, err, intf.ErrUnauthenticated)
	assert.Contains(t, err.Error(), "client.WithToken(token)")
	assert.NotContains(t, err.Error(), "Authorization")
	require.True(t, errors.As(err, &te))
	assert.Equal(t, access.ReasonNoToken, te.Reason)

	_, err = g.Authenticate("tok"+strings.Repeat("x", access.MaxHeaderBytes), "1.2.3.4:5")
	require.ErrorIs(t, err, intf.ErrUnauthenticated)
	assert.NotContains(t, err.Error(), "Authorization", "an RPC call has no header")
	_, err = g.AuthenticateHeader([]string{"Bearer " + strings.Repeat("x", access.MaxHeaderBytes)}, "1.2.3.4:5")
	assert.Contains(t, err.Error(), "Authorization header over")
}
