package lease

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/machineid"
)

func TestCommonOptions(t *testing.T) {
	var c Common
	require.Nil(t, c.Fill("p"))
	assert.Equal(t, []time.Duration{DefaultTTL, DefaultDialTimeout, DefaultMaxClockSkew}, []time.Duration{c.TTL, c.DialTimeout, c.MaxClockSkew})
	assert.Equal(t, DefaultPrefix, c.Prefix)
	assert.NotEmpty(t, c.NodeName)
	assert.NotNil(t, c.Logger)
	c.TTL = 1500 * time.Millisecond
	var oe *OptionError
	require.ErrorAs(t, c.Fill("p"), &oe)
	assert.Equal(t, "TTL", oe.Option)
	assert.Equal(t, "p", oe.Provider)
	c.TTL, c.MachineRange = DefaultTTL, &machineid.Range{First: 5, Last: 4}
	require.ErrorAs(t, c.Fill("p"), &oe)
	assert.Equal(t, "MachineRange", oe.Option)
}
