package conformance_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/internal/leasetest"
)

// What makes a coordinator forget what it knew of an id: a wipe, a
// restored backup, marks set back by hand.

func (e etcdCoord) wipe(t *testing.T, prefix string) {
	_, err := e.c.Delete(bg, prefix+"/", clientv3.WithPrefix())
	require.NoError(t, err)
}

// snapshot keeps each key with its lease: a restore within the TTL finds
// the leases alive, as an etcd restored from a snapshot has them.
func (e etcdCoord) snapshot(t *testing.T, prefix string) func(t *testing.T, meanwhile func()) {
	resp, err := e.c.Get(bg, prefix+"/", clientv3.WithPrefix())
	require.NoError(t, err)
	kvs := resp.Kvs
	return func(t *testing.T, meanwhile func()) {
		e.wipe(t, prefix)
		for _, kv := range kvs {
			put(t, e.c, kv)
		}
		if meanwhile != nil {
			meanwhile()
		}
	}
}

func put(t *testing.T, c *clientv3.Client, kv *mvccpb.KeyValue) {
	var opts []clientv3.OpOption
	if kv.Lease != 0 {
		opts = append(opts, clientv3.WithLease(clientv3.LeaseID(kv.Lease)))
	}
	_, err := c.Put(bg, string(kv.Key), string(kv.Value), opts...)
	require.NoError(t, err, "restoring %s", kv.Key)
}

func (e etcdCoord) setMarks(t *testing.T, prefix string, machine, ms int64) {
	_, err := e.c.Put(bg, prefix+"/marks/"+strconv.FormatInt(machine, 10), strconv.FormatInt(ms, 10))
	require.NoError(t, err)
}

func (p pgCoord) wipe(t *testing.T, _ string) {
	_, err := p.conn.Exec(bg, `DROP TABLE vesta_machines, vesta_machines_marks, vesta_machines_layout`)
	require.NoError(t, err)
}

// snapshot is a dump of the fleet's rows of both tables.
func (p pgCoord) snapshot(t *testing.T, prefix string) func(t *testing.T, meanwhile func()) {
	type row struct {
		machine, token, mark int64
		holder, expires      string // expires_at as text: '-infinity' too
	}
	rows, err := p.conn.Query(bg, `SELECT machine, token, mark_ms, holder, expires_at::text FROM vesta_machines WHERE prefix = $1`, prefix)
	require.NoError(t, err)
	claims, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.machine, &x.token, &x.mark, &x.holder, &x.expires)
	})
	require.NoError(t, err)
	rows, err = p.conn.Query(bg, `SELECT machine, mark_ms FROM vesta_machines_marks WHERE prefix = $1`, prefix)
	require.NoError(t, err)
	marks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]int64, error) {
		var m [2]int64
		return m, r.Scan(&m[0], &m[1])
	})
	require.NoError(t, err)
	// The restore is one transaction holding both tables, as a restore
	// would: a node claiming meanwhile waits, and sees the dump whole.
	return func(t *testing.T, meanwhile func()) {
		tx, err := p.conn.Begin(bg)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(bg) }()
		_, err = tx.Exec(bg, `LOCK TABLE vesta_machines, vesta_machines_marks IN ACCESS EXCLUSIVE MODE`)
		require.NoError(t, err)
		_, err = tx.Exec(bg, `DELETE FROM vesta_machines WHERE prefix = $1`, prefix)
		require.NoError(t, err)
		_, err = tx.Exec(bg, `DELETE FROM vesta_machines_marks WHERE prefix = $1`, prefix)
		require.NoError(t, err)
		for _, c := range claims {
			_, err := tx.Exec(bg, `INSERT INTO vesta_machines (prefix, machine, holder, token, expires_at, mark_ms) VALUES ($1, $2, $3, $4, $5::timestamptz, $6)`,
				prefix, c.machine, c.holder, c.token, c.expires, c.mark)
			require.NoError(t, err)
		}
		for _, m := range marks {
			_, err := tx.Exec(bg, `INSERT INTO vesta_machines_marks (prefix, machine, mark_ms) VALUES ($1, $2, $3)`, prefix, m[0], m[1])
			require.NoError(t, err)
		}
		if meanwhile != nil {
			meanwhile()
			p.awaitWaitingClaim(t)
		}
		require.NoError(t, tx.Commit(bg))
	}
}

func (p pgCoord) setMarks(t *testing.T, prefix string, machine, ms int64) {
	_, err := p.conn.Exec(bg, `UPDATE vesta_machines SET mark_ms = $3 WHERE prefix = $1 AND machine = $2`, prefix, machine, ms)
	require.NoError(t, err)
	_, err = p.conn.Exec(bg, `UPDATE vesta_machines_marks SET mark_ms = $3 WHERE prefix = $1 AND machine = $2`, prefix, machine, ms)
	require.NoError(t, err)
}

// awaitWaitingClaim waits until a claim statement waits on a lock: a node
// started during a restore then claims as it commits, before the holder
// it takes from (queued behind it) can claim its id again.
func (p pgCoord) awaitWaitingClaim(t *testing.T) {
	other, err := pgx.Connect(bg, p.dsn)
	require.NoError(t, err)
	defer func() { _ = other.Close(bg) }()
	leasetest.Eventually(t, 30*time.Second, "a claim waiting on the restore's locks", func() bool {
		var n int
		require.NoError(t, other.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH claimed AS%'`).Scan(&n))
		return n > 0
	})
}

func (e etcdCoord) layout(t *testing.T, prefix string) string {
	resp, err := e.c.Get(bg, prefix+"/layout")
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1, "the layout key")
	require.Zero(t, resp.Kvs[0].Lease, "the layout key has no lease")
	return string(resp.Kvs[0].Value)
}

func (e etcdCoord) layoutWhere(prefix string) string { return "key " + prefix + "/layout" }

func (p pgCoord) layout(t *testing.T, prefix string) string {
	var v string
	require.NoError(t, p.conn.QueryRow(bg, `SELECT layout FROM vesta_machines_layout WHERE prefix = $1`, prefix).Scan(&v))
	return v
}

func (p pgCoord) layoutWhere(prefix string) string {
	return "table vesta_machines_layout, row prefix " + prefix
}
