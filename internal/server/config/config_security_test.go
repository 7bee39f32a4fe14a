package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

func TestSecurityDefaults(t *testing.T) {
	c, err := load(t, "--data-dir", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, Security{ReloadInterval: DefaultReloadInterval}, c.Security)
	assert.False(t, c.Security.TLS())
	assert.False(t, c.Security.Reloadable())
}

func TestSecurityKeys(t *testing.T) {
	t.Setenv("VESTA_TLS_KEY", "/etc/vesta/key.pem")
	file := writeFile(t, "v.yaml", "tlsCert: /etc/vesta/cert.pem\ntlsClientCA: /etc/vesta/ca.pem\nreloadInterval: 5s\n")
	c, err := load(t, "--config", file, "--data-dir", t.TempDir(), "--auth-file", "/etc/vesta/auth.yaml")
	require.NoError(t, err)
	assert.Equal(t, Security{TLSCert: "/etc/vesta/cert.pem", TLSKey: "/etc/vesta/key.pem", TLSClientCA: "/etc/vesta/ca.pem",
		AuthFile: "/etc/vesta/auth.yaml", ReloadInterval: 5 * time.Second}, c.Security)
	assert.True(t, c.Security.TLS())
	assert.True(t, c.Security.Reloadable())
}

func TestSecurityRateKeys(t *testing.T) {
	c, err := load(t, "--data-dir", t.TempDir(), "--rate-limit", "2500.5", "--rate-burst", "100", "--reload-interval", "0")
	require.NoError(t, err)
	assert.Equal(t, Security{RateLimit: 2500.5, RateBurst: 100}, c.Security)
}

func TestSecurityKeysRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		key  string
	}{
		{[]string{"--tls-cert", "c.pem"}, "tlsKey"},
		{[]string{"--tls-key", "k.pem"}, "tlsCert"},
		{[]string{"--tls-client-ca", "ca.pem"}, "tlsClientCA"},
		{[]string{"--rate-limit", "-1"}, "rateLimit"},
		{[]string{"--rate-limit", "fast"}, "rateLimit"},
		{[]string{"--rate-limit", "NaN"}, "rateLimit"},
		{[]string{"--rate-limit", "2e9"}, "rateLimit"},
		{[]string{"--rate-burst", "10"}, "rateBurst"},
		{[]string{"--rate-limit", "10", "--rate-burst", "1.5"}, "rateBurst"},
		{[]string{"--rate-limit", "10", "--auth-file", "a.yaml"}, "rateLimit"},
		{[]string{"--reload-interval", "-1s"}, "reloadInterval"},
		{[]string{"--reload-interval", "2h"}, "reloadInterval"},
	} {
		_, err := load(t, append(c.args, "--data-dir", t.TempDir())...)
		require.Error(t, err, "%v", c.args)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "config key "+c.key+":", "%v", c.args)
	}
	t.Setenv("VESTA_RATE_LIMIT", "")
	_, err := load(t, "--data-dir", t.TempDir())
	assert.ErrorContains(t, err, `from environment variable VESTA_RATE_LIMIT: want a number 0..1e+09 (the variable is set but empty)`)
}
