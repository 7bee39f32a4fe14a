package conformance_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// A fleet keeps one layout with its prefix: the first node writes its
// epoch, type, genMethod, version and lead; a node of the same layout
// joins (raising the lead, never lowering it); one of another epoch, type
// or version refuses to start before it claims anything, naming the
// record and both values; one of another genMethod (another door) joins.
func TestFleetLayoutIsKeptAndEnforced(t *testing.T) {
	each(t, func(t *testing.T, c coordinator, prefix string) {
		args := append(c.args(prefix, c.addr()), "--no-data-dir=true", "--machine-range", "20-29")
		record := func() map[string]any {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(c.layout(t, prefix)), &m))
			return m
		}
		a := start(t, append(args, "--etcd-node-name", "a")...)
		issuing(t, a, 30*time.Second)
		assert.Equal(t, map[string]any{"epochMillis": float64(intf.DefaultEpochMillis), "type": "max-peak", "genMethod": 2.0, "version": 0.0, "leadMillis": 3000.0},
			record(), "the first node's layout and lead (3 s)")
		b := start(t, append(args, "--etcd-node-name", "b", "--max-borrow", "2s")...)
		issuing(t, b, 30*time.Second)
		assert.Equal(t, 5000.0, record()["leadMillis"], "a larger lead raises the fleet's")
		d := start(t, append(args, "--etcd-node-name", "d")...)
		issuing(t, d, 30*time.Second)
		assert.Equal(t, 5000.0, record()["leadMillis"], "a smaller lead never lowers it")

		for _, tc := range []struct {
			flag, value, fleet, own string
		}{
			{"--epoch", strconv.FormatInt(intf.DefaultEpochMillis+8000, 10), "epoch 2014-12-31T16:00:00Z", "epoch 2014-12-31T16:00:08Z"},
			{"--type", "min-granularity", "type max-peak", "type min-granularity"},
			{"--id-version", "1", "version 0", "version 1"},
		} {
			before := record()
			x := start(t, append(args, "--etcd-node-name", "x", tc.flag, tc.value)...)
			select {
			case <-x.Done():
			case <-time.After(30 * time.Second):
				t.Fatalf("a node with %s %s still runs: %s", tc.flag, tc.value, x.Logs())
			}
			require.Error(t, x.Err(), "refused: %s", tc.flag)
			assert.Contains(t, x.Logs(), "the fleet under prefix "+prefix+" has "+tc.fleet+" ("+c.layoutWhere(prefix)+"), this node "+tc.own)
			assert.Contains(t, x.Logs(), "every node of a fleet needs the same epoch, type and version")
			assert.NotContains(t, x.Logs(), "machine id held", "refused before it claims")
			assert.Equal(t, before, record(), "the fleet's record is left as it was")
		}
		g := start(t, append(args, "--etcd-node-name", "g", "--gen-method", "1")...)
		issuing(t, g, 30*time.Second)
	})
}
