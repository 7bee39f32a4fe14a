package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// A password on the command line is refused, naming the key, the flag and
// where to give it instead, without showing it; the same value from the
// environment or the file is taken, and so is a DSN without a password.
func TestPasswordFlagsRefused(t *testing.T) {
	const pw = "s3cret-on-argv"
	etcd := []string{"--machine-provider", "etcd", "--etcd-endpoints", "127.0.0.1:2379", "--etcd-username", "ids"}
	pg := []string{"--machine-provider", "postgres"}
	segPg := []string{"--data-dir", "/var/lib/vesta", "--segment-store", "postgres"}
	for _, tc := range []struct {
		name string
		args []string
		key  string
		env  string
	}{
		{"etcd password", append(etcd, "--etcd-password", pw), KeyEtcdPassword, "VESTA_ETCD_PASSWORD"},
		{"machine DSN URL user info", append(pg, "--machine-dsn", "postgres://ids:"+pw+"@db/ids"), KeyMachineDSN, "VESTA_MACHINE_DSN"},
		{"machine DSN URL query", append(pg, "--machine-dsn", "postgresql://ids@db/ids?password="+pw), KeyMachineDSN, "VESTA_MACHINE_DSN"},
		{"machine DSN key=value", append(pg, "--machine-dsn", "host=db user=ids password="+pw), KeyMachineDSN, "VESTA_MACHINE_DSN"},
		{"machine DSN key = value", append(pg, "--machine-dsn", "password = "+pw+" host=db"), KeyMachineDSN, "VESTA_MACHINE_DSN"},
		{"segment DSN", append(segPg, "--segment-dsn", "postgres://ids:"+pw+"@db/ids"), KeySegmentDSN, "VESTA_SEGMENT_DSN"},
		{"segment DSN sslpassword", append(segPg, "--segment-dsn", "host=db sslkey=k.pem sslpassword="+pw), KeySegmentDSN, "VESTA_SEGMENT_DSN"},
		{"machine DSN URL sslpassword", append(pg, "--machine-dsn", "postgres://ids@db/ids?sslpassword="+pw), KeyMachineDSN, "VESTA_MACHINE_DSN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.args...)
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			var ve *ValueError
			require.True(t, errors.As(err, &ve), "%v", err)
			assert.Equal(t, tc.key, ve.Key)
			assert.Equal(t, LayerFlag, ve.Source.Layer)
			assert.Contains(t, err.Error(), "no password on the command line")
			assert.Contains(t, err.Error(), tc.env, "says where to give it")
			assert.NotContains(t, err.Error(), pw)
		})
	}

	t.Run("the same from the environment", func(t *testing.T) {
		t.Setenv("VESTA_ETCD_PASSWORD", pw)
		c, err := load(t, etcd...)
		require.NoError(t, err)
		assert.Equal(t, pw, c.Etcd.Password)

		t.Setenv("VESTA_MACHINE_DSN", "postgres://ids:"+pw+"@db/ids")
		c, err = load(t, pg...)
		require.NoError(t, err)
		assert.Equal(t, "postgres://ids:"+pw+"@db/ids", c.Postgres.DSN)
	})
	t.Run("from the file", func(t *testing.T) {
		f := writeFile(t, "vesta.yaml", "machineProvider: postgres\nmachineDSN: postgres://ids:"+pw+"@db/ids\n")
		c, err := load(t, "--config", f)
		require.NoError(t, err)
		assert.Equal(t, "postgres://ids:"+pw+"@db/ids", c.Postgres.DSN)
	})
	t.Run("a DSN without a password", func(t *testing.T) {
		for _, dsn := range []string{"postgres://ids@db/ids?sslmode=verify-full", "host=db user=ids sslmode=require", "postgres:///ids?host=/run/postgresql"} {
			c, err := load(t, append(pg, "--machine-dsn", dsn)...)
			require.NoError(t, err, dsn)
			assert.Equal(t, dsn, c.Postgres.DSN)
		}
	})
}

func TestDSNHasPassword(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://ids:pw@db/ids":            true,
		"postgres://ids:@db/ids":              true, // an empty password is still the password field
		"postgresql://ids@db/ids?password=pw": true,
		"host=db password=pw":                 true,
		"password='a b' host=db":              true,
		"host=db\tpassword =pw":               true,
		"postgres://ids@db/ids":               false,
		"postgres://db/ids?sslmode=require":   false,
		"host=db user=ids":                    false,
		"host=db passfile=/etc/vesta/pgpass":  false,
		"/var/lib/vesta/segments.db":          false,
	} {
		assert.Equal(t, want, dsnHasPassword(dsn), dsn)
	}
}
