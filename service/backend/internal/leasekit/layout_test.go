package leasekit

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/machineid"
)

// A stored layout record is read back, or refused as corrupt naming where
// it is kept and what it holds.
func TestParseLayout(t *testing.T) {
	c := Config{Provider: "test", Layout: "key /p/layout"}
	f, err := c.parseLayout([]byte(`{"epochMillis":1,"type":"min-granularity","genMethod":2,"version":0,"leadMillis":3000}`))
	require.NoError(t, err)
	assert.Equal(t, intf.MinGranularity, f.Type)
	assert.Equal(t, 3*time.Second, f.Lead)
	back, err := c.parseLayout(f.record())
	require.NoError(t, err)
	assert.Equal(t, f, back)
	for _, v := range []string{`{"epochMillis":0,"type":"max-peak"}`, `{"epochMillis":1,"type":"max-peak","leadMillis":-1}`,
		`{"epochMillis":1,"type":"no-such-type"}`, `not json`, ``} {
		_, err := c.parseLayout([]byte(v))
		require.Error(t, err, v)
		assert.Contains(t, err.Error(), "test: the fleet's layout (key /p/layout) is corrupt")
	}
}

// memLayout is a layout record kept in memory, swapped as a coordinator does.
type memLayout struct {
	hangingBackend
	mu    sync.Mutex
	rec   []byte
	swaps int
}

func (m *memLayout) SwapLayout(_ context.Context, old, rec []byte) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.swaps++
	if bytes.Equal(old, m.rec) && (old == nil) == (m.rec == nil) {
		m.rec = rec
	}
	return m.rec, nil
}

// Nodes joining at once: the first layout is kept, the largest lead wins,
// a clashing node is refused naming both values.
func TestJoinLayout(t *testing.T) {
	b := &memLayout{}
	e := NewEngine(Config{Provider: "test", Layout: "key /p/layout", Common: lease.Common{Prefix: "/p"}}, b)
	layout := machineid.Layout{EpochMillis: 1_000, Type: intf.MaxPeak, GenMethod: 0}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			l := layout
			l.GenMethod = int64(i % 3) // genMethod may differ
			got, err := e.joinLayout(t.Context(), FleetLayout{Layout: l, Lead: time.Duration(i) * time.Second})
			assert.NoError(t, err)
			assert.True(t, got.Joins(l))
			assert.GreaterOrEqual(t, got.Lead, time.Duration(i)*time.Second)
		})
	}
	wg.Wait()
	f, err := e.c.parseLayout(b.rec)
	require.NoError(t, err)
	assert.Equal(t, 15*time.Second, f.Lead, "the largest lead")

	other := layout
	other.EpochMillis = 9_000
	got, err := e.joinLayout(t.Context(), FleetLayout{Layout: other, Lead: time.Hour})
	require.NoError(t, err)
	assert.False(t, got.Joins(other))
	assert.Equal(t, 15*time.Second, got.Lead, "a clashing node raises nothing")
	le := &machineid.LayoutError{Provider: "test", Prefix: "/p", Where: "key /p/layout", Fleet: got.Layout, Node: other}
	assert.ErrorIs(t, le, intf.ErrInvalidArgument)
	assert.Contains(t, le.Error(), "test: the fleet under prefix /p has epoch")
	assert.NotContains(t, le.Error(), "genMethod")
}
