package segment

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/sysclock"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// nopStore is a segstore.Store that is never called.
type nopStore struct{ segstore.Store }

func TestSettingsDefaults(t *testing.T) {
	s, err := Settings{Store: nopStore{}}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, int64(1_000_000), s.MaxStep)
	assert.Equal(t, 60*time.Second, s.RefreshInterval)
	assert.Equal(t, 5*time.Second, s.LoadTimeout)
	assert.Equal(t, 500*time.Millisecond, s.WaitTimeout)
	assert.Equal(t, time.Second, s.RetryInterval)
	assert.Equal(t, time.Second, s.MissRefreshInterval)
	assert.IsType(t, &sysclock.Clock{}, s.Clock)
	assert.NotNil(t, s.Logger)

	s, err = Settings{Store: nopStore{}, MissRefreshInterval: -1}.withDefaults()
	require.NoError(t, err, "negative: the reread after a miss is off")
	assert.Negative(t, s.MissRefreshInterval)
}

func TestSettingsRejectsBadFields(t *testing.T) {
	cases := map[string]Settings{
		"segstore.Store":      {},
		"maxStep":             {Store: nopStore{}, MaxStep: -1},
		"refreshInterval":     {Store: nopStore{}, RefreshInterval: -time.Second},
		"loadTimeout":         {Store: nopStore{}, LoadTimeout: time.Hour},
		"waitTimeout":         {Store: nopStore{}, WaitTimeout: time.Microsecond},
		"retryInterval":       {Store: nopStore{}, RetryInterval: 2 * time.Hour},
		"missRefreshInterval": {Store: nopStore{}, MissRefreshInterval: 2 * time.Hour},
	}
	for field, s := range cases {
		_, err := New(context.Background(), s)
		require.Error(t, err, field)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument, field)
		assert.Contains(t, err.Error(), field)
	}
}
