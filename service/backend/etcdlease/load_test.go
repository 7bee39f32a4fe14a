package etcdlease_test

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// generator issues IDs from svc on a few goroutines until stopped,
// tolerating only the errors of a node without a valid id.
type generator struct {
	name string
	svc  *service.Service
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	ids  []int64
	errs int
	bad  error
	// issued counts the IDs issued so far, while it runs.
	issued atomic.Int64
}

func generate(name string, svc *service.Service, goroutines int) *generator {
	g := &generator{name: name, svc: svc, stop: make(chan struct{})}
	for range goroutines {
		g.wg.Go(g.run)
	}
	return g
}

func (g *generator) run() {
	var mine []int64
	errs := 0
	defer func() {
		g.mu.Lock()
		g.ids = append(g.ids, mine...)
		g.errs += errs
		g.mu.Unlock()
	}()
	for {
		select {
		case <-g.stop:
			return
		default:
		}
		ids, err := g.svc.GenIds(bg, 16)
		switch {
		case err == nil:
			g.issued.Add(int64(len(ids)))
			for _, id := range ids {
				mine = append(mine, int64(id))
			}
		case errors.Is(err, intf.ErrFenced), errors.Is(err, intf.ErrNotPersisted),
			// A call that waited across the takeover is refused (its unit
			// may lie below the new holder's floor): a refusal, not an ID.
			errors.Is(err, intf.ErrUnavailable):
			errs++
		default:
			g.mu.Lock()
			g.bad = err
			g.mu.Unlock()
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (g *generator) finish() {
	close(g.stop)
	g.wg.Wait()
}

func TestNoDuplicatesAcrossNodesUnderLoad(t *testing.T) {
	t.Parallel()
	c := etcdClient(t)
	aLease := newLease(t, "a")
	keys := aLease.Keys()
	gated := newGatedLease(aLease)
	a := startService(t, settings(t, gated, "a"))
	b := startNode(t, "b")
	cc := startNode(t, "c")
	gens := []*generator{generate("a", a, 2), generate("b", b.svc, 2), generate("c", cc.svc, 2)}
	eachIssues(t, gens, "before the revoke")

	// a's lease is revoked under load; d takes a's id while a waits at the
	// gate; then a claims a new id.
	_, err := c.Revoke(bg, leaseOf(t, c, keys, 0))
	require.NoError(t, err)
	<-gated.lost
	d := startNode(t, "d")
	require.Equal(t, int64(0), d.svc.Stats().Machine)
	gens = append(gens, generate("d", d.svc, 2))
	close(gated.gate)
	eventually(t, 2*testTTL, "a issues again", func() bool { return a.Stats().LeaseHeld })
	eachIssues(t, gens, "after a's new claim")

	seen := make(map[int64]string)
	var a0, d0 []int64 // time units of machine 0's IDs from a and from d
	total := 0
	for _, g := range gens {
		g.finish()
		require.NoError(t, g.bad, "node %s", g.name)
		assert.NotEmpty(t, g.ids, "node %s issued IDs", g.name)
		for _, id := range g.ids {
			if other, dup := seen[id]; dup {
				t.Fatalf("duplicate ID %d from %s and %s", id, other, g.name)
			}
			seen[id] = g.name
			if machineOf(id) == 0 && g.name == "a" {
				a0 = append(a0, timeUnit(id))
			}
			if g.name == "d" {
				d0 = append(d0, timeUnit(id))
			}
		}
		total += len(g.ids)
		t.Logf("node %s: %d IDs, %d refusals while it held no valid id", g.name, len(g.ids), g.errs)
	}
	require.NotEmpty(t, a0)
	require.NotEmpty(t, d0)
	assert.Less(t, slices.Max(a0), slices.Min(d0), "d issued machine 0's IDs only in time units after a's")
	assert.Equal(t, int64(3), a.Stats().Machine, "a claimed the next free id")
	t.Logf("%d IDs from 4 nodes, no duplicate", total)
}

// eachIssues waits until every generator has issued IDs since the call.
func eachIssues(t *testing.T, gens []*generator, when string) {
	t.Helper()
	from := make([]int64, len(gens))
	for i, g := range gens {
		from[i] = g.issued.Load()
	}
	eventually(t, time.Minute, "every node issues "+when, func() bool {
		for i, g := range gens {
			if g.issued.Load() == from[i] {
				return false
			}
		}
		return true
	})
}
