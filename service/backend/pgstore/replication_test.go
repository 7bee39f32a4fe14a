package pgstore

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplicationSynchronous(t *testing.T) {
	for _, c := range []struct {
		commit, names string
		want          bool
	}{
		{"on", "*", true},
		{"remote_apply", "FIRST 1 (s1, s2)", true},
		{"remote_write", "*", false},
		{"local", "*", false},
		{"off", "*", false},
		{"on", "", false},
		{"remote_apply", "", false},
	} {
		r := Replication{SynchronousCommit: c.commit, SynchronousStandbyNames: c.names}
		assert.Equal(t, c.want, r.Synchronous(), "%+v", c)
		assert.Equal(t, c.want, r.Why() == "", "%+v: why %q", c, r.Why())
	}
}

func TestReplicationErrorNamesTheKey(t *testing.T) {
	p := (&Store{}).policy(2)
	err := error(&ReplicationError{Policy: p, Server: "10.0.0.1:5432",
		Replication: Replication{SynchronousCommit: "local", SynchronousStandbyNames: "*"}})
	assert.True(t, errors.Is(err, ErrUnsafeReplication))
	assert.False(t, errors.Is(err, ErrStandby))
	assert.EqualError(t, err, `segment store postgres: refusing to allocate on 10.0.0.1:5432: segmentDSN names 2 servers, so it may fail over to a standby, `+
		`but synchronous_commit is "local": commits do not wait until a standby has them on disk. `+
		`A range allocated just before a failover can then be missing on the new primary, which hands it out again: two instances would issue the same IDs. `+
		`Make replication synchronous (synchronous_commit = on or remote_apply, and synchronous_standby_names naming the standbys: docs/segment.md), `+
		`or accept the risk with segmentAllowAsyncFailover: true`)

	standby := error(&ReplicationError{Policy: (&Store{}).policy(1), Server: "10.0.0.2:5432", Replication: Replication{InRecovery: true}})
	assert.True(t, errors.Is(standby, ErrStandby))
	assert.False(t, errors.Is(standby, ErrUnsafeReplication))
	assert.ErrorContains(t, standby, "10.0.0.2:5432 is a standby")
	assert.ErrorContains(t, standby, "target_session_attrs=read-write")
}

func TestServersOfADSN(t *testing.T) {
	for dsn, want := range map[string][]string{
		// sslmode prefer (the default) doubles each host in Fallbacks.
		"postgres://u@db1:5432,db2:5433/ids":                              {"db1:5432", "db2:5433"},
		"postgres://u@db1/ids?sslmode=disable":                            {"db1:5432"},
		"host=a,b port=5432,6432 dbname=ids sslmode=disable":              {"a:5432", "b:6432"},
		"postgres://u@[::1]:5432,db2/ids?target_session_attrs=read-write": {"[::1]:5432", "db2:5432"},
		"host=a dbname=ids":                                               {"a:5432"},
	} {
		cfg, err := ParseDSN(dsn)
		require.NoError(t, err, dsn)
		assert.Equal(t, want, servers(&cfg.ConnConfig.Config), dsn)
	}
}
