package etcdlease_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

// The range registry (etcdlease.RangesKey) is shared by every prefix of
// the etcd of the tests with ranges (rangesEndpoint): each test here uses
// its own ids of 600-699, which no other test of the package uses.

// withRange gives a lease machineRange first-last and the test's prefix
// plus sub (fleets under different prefixes of one etcd).
func withRange(t *testing.T, sub string, first, last int64) func(*etcdlease.Options) {
	return func(o *etcdlease.Options) {
		o.Prefix = prefixOf(t) + "/" + sub
		o.MachineRange = &etcdlease.Range{First: first, Last: last}
		onRangesEtcd(o)
	}
}

// registeredRanges lists the ranges registered under RangesKey by prefix,
// with the lease of each entry.
func registeredRanges(t *testing.T, c *clientv3.Client) map[string][]registered {
	t.Helper()
	resp, err := c.Get(bg, etcdlease.RangesKey, clientv3.WithPrefix())
	require.NoError(t, err)
	out := map[string][]registered{}
	for _, kv := range resp.Kvs {
		var e struct{ Prefix, Range string }
		require.NoError(t, json.Unmarshal(kv.Value, &e), "entry %s", kv.Key)
		out[e.Prefix] = append(out[e.Prefix], registered{e.Range, clientv3.LeaseID(kv.Lease)})
	}
	return out
}

type registered struct {
	Range string
	Lease clientv3.LeaseID
}

func TestOverlappingRangeOfAnotherPrefixIsRefused(t *testing.T) {
	c := rangesClient(t)
	a := startNode(t, "a", withRange(t, "a", 600, 609))
	require.Equal(t, int64(600), a.svc.Stats().Machine, "a claims inside its range")
	prefixA := a.lease.Options().Prefix

	// b, under another prefix, overlaps a's range: refused at start.
	bLease := newLease(t, "b", withRange(t, "b", 605, 620))
	prefixB := bLease.Options().Prefix
	_, err := service.New(bg, settings(t, bLease, "b"))
	require.Error(t, err)
	var overlap *etcdlease.RangeOverlapError
	require.True(t, errors.As(err, &overlap), "a *RangeOverlapError: %v", err)
	assert.Equal(t, etcdlease.RangeOverlapError{Prefix: prefixB, Range: etcdlease.Range{First: 605, Last: 620},
		OtherPrefix: prefixA, OtherRange: etcdlease.Range{First: 600, Last: 609}}, *overlap)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	for _, want := range []string{prefixA, prefixB, "600-609", "605-620"} {
		assert.Contains(t, err.Error(), want, "the error names both prefixes and ranges")
	}
	// b revoked its lease: no machine key, clock report or range entry
	// of b is left.
	resp, err := c.Get(bg, bLease.Keys().Machines(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	assert.Zero(t, resp.Count, "b holds no machine id")
	_, _, reported := get(t, c, bLease.Keys().Clock("b"))
	assert.False(t, reported, "b's clock report is gone with its lease")
	ranges := registeredRanges(t, c)
	assert.Empty(t, ranges[prefixB], "b's range is not registered")
	assert.Equal(t, []registered{{"600-609", leaseOf(t, c, a.lease.Keys(), 600)}}, ranges[prefixA],
		"a's range is registered under a's lease")

	// a goes on issuing inside its range.
	id, err := a.svc.GenId(bg)
	require.NoError(t, err)
	assert.Equal(t, int64(600), machineOf(id))

	// A range disjoint from a's starts; it overlaps b's, which would
	// refuse it had b's entry outlived b's refusal.
	d := startNode(t, "d", withRange(t, "d", 610, 620))
	assert.Equal(t, int64(610), d.svc.Stats().Machine)
	ranges = registeredRanges(t, c)
	assert.Equal(t, []registered{{"610-620", leaseOf(t, c, d.lease.Keys(), 610)}}, ranges[d.lease.Options().Prefix])
	assert.Len(t, ranges[prefixA], 1, "a is still registered")
}

func TestOverlappingRangesStartedAtOnceOneIsRefused(t *testing.T) {
	// Two fleets with overlapping ranges start at the same moment: each
	// registers, then reads the registry. Whatever order that happens
	// in, the one registered later refuses and the other runs.
	type result struct {
		svc *service.Service
		err error
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i, r := range []etcdlease.Range{{First: 630, Last: 634}, {First: 634, Last: 638}} {
		name := fmt.Sprintf("n%d", i)
		lease := newLease(t, name, withRange(t, name, r.First, r.Last))
		wg.Go(func() {
			svc, err := service.New(bg, settings(t, lease, name))
			if err == nil {
				t.Cleanup(func() { _ = svc.Close() })
			}
			results[i] = result{svc, err}
		})
	}
	wg.Wait()
	var refused, running int
	for _, r := range results {
		var overlap *etcdlease.RangeOverlapError
		switch {
		case r.err == nil:
			running++
			_, err := r.svc.GenId(bg)
			assert.NoError(t, err)
		case errors.As(r.err, &overlap):
			refused++
		default:
			t.Errorf("unexpected error: %v", r.err)
		}
	}
	assert.Equal(t, 1, refused, "exactly one fleet is refused")
	assert.Equal(t, 1, running, "the other runs")
}

func TestClaimsStayInsideTheRange(t *testing.T) {
	c := rangesClient(t)
	prefix := prefixOf(t) + "/r"
	keys := etcdlease.Keys{Prefix: prefix}
	grant, err := c.Grant(bg, 60)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = c.Revoke(bg, grant.ID) })
	squat := func(ids ...int64) {
		for _, id := range ids {
			_, err := c.Put(bg, keys.Machine(id), "squatter", clientv3.WithLease(grant.ID))
			require.NoError(t, err)
		}
	}
	inRange := func(first, last int64) func(*etcdlease.Options) {
		return func(o *etcdlease.Options) {
			o.Prefix = prefix
			o.MachineRange = &etcdlease.Range{First: first, Last: last}
			onRangesEtcd(o)
		}
	}

	// 650-651 is full; every id below and above it is free, yet none is
	// taken.
	squat(650, 651)
	lease := newLease(t, "full", inRange(650, 651), etcdlease.ClaimLowestFirst(false))
	_, err = service.New(bg, settings(t, lease, "full"))
	require.ErrorIs(t, err, etcdlease.ErrAllTaken)
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	assert.Contains(t, err.Error(), "all 2 machine ids of 650-651 under "+keys.Machines())
	resp, err := c.Get(bg, keys.Machines(), clientv3.WithPrefix())
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 2, "no id outside the range was taken")
	for _, kv := range resp.Kvs {
		assert.Equal(t, "squatter", string(kv.Value))
	}

	// In 660-664 with all but 662 squatted, random claims find 662; a
	// node claiming the lowest free id takes the first of its range, not
	// 0.
	squat(660, 661, 663, 664)
	n := startNode(t, "random", inRange(660, 664), etcdlease.ClaimLowestFirst(false))
	assert.Equal(t, int64(662), n.svc.Stats().Machine)
	low := startNode(t, "lowest", inRange(670, 679))
	assert.Equal(t, int64(670), low.svc.Stats().Machine)
	for _, node := range []*node{n, low} {
		for range 20 {
			id, err := node.svc.GenId(bg)
			require.NoError(t, err)
			assert.Equal(t, node.svc.Stats().Machine, machineOf(id))
		}
	}
}

// A node without machineRange may claim any id: it registers every id,
// marked as no range. Fleets that all lack one stay apart (their prefixes
// are their id spaces); where fleets split the ids by ranges, the one
// registered later is refused, whichever has the range.
func TestNodeWithoutRangeIsRegisteredAndChecked(t *testing.T) {
	c := rangesClient(t)
	plain := func(sub string) func(*etcdlease.Options) {
		return func(o *etcdlease.Options) { o.Prefix = prefixOf(t) + "/" + sub; onRangesEtcd(o) }
	}
	refused := func(lease *etcdlease.Lease) *etcdlease.RangeOverlapError {
		t.Helper()
		_, err := service.New(bg, settings(t, lease, lease.Options().NodeName))
		var overlap *etcdlease.RangeOverlapError
		require.True(t, errors.As(err, &overlap), "a *RangeOverlapError: %v", err)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		assert.Empty(t, registeredRanges(t, c)[lease.Options().Prefix], "the refused node's entry is gone with its lease")
		return overlap
	}

	p1, p2 := startNode(t, "p1", plain("p1")), startNode(t, "p2", plain("p2"))
	prefix1 := p1.lease.Options().Prefix
	assert.Equal(t, []registered{{"0-1023", leaseOf(t, c, p1.lease.Keys(), p1.svc.Stats().Machine)}}, registeredRanges(t, c)[prefix1],
		"a node without a range registers every id")
	assert.Len(t, registeredRanges(t, c)[p2.lease.Options().Prefix], 1, "two fleets without ranges are apart")

	ranged := newLease(t, "r", withRange(t, "r", 690, 699))
	overlap := refused(ranged)
	assert.True(t, overlap.OtherNoRange)
	assert.Equal(t, etcdlease.Range{First: 690, Last: 699}, overlap.Range)
	assert.Equal(t, etcdlease.FullRange, overlap.OtherRange)
	assert.Contains(t, overlap.Error(), "prefix "+ranged.Options().Prefix+" (machineRange 690-699) overlaps prefix "+overlap.OtherPrefix+" (no machineRange: any machine id, 0-1023)")

	require.NoError(t, p1.svc.Close())
	require.NoError(t, p2.svc.Close())
	r := startNode(t, "r", withRange(t, "r", 690, 699))
	require.Equal(t, int64(690), r.svc.Stats().Machine, "with the fleets without ranges gone")

	overlap = refused(newLease(t, "p3", plain("p3")))
	assert.True(t, overlap.NoRange)
	assert.Equal(t, r.lease.Options().Prefix, overlap.OtherPrefix)
	for _, want := range []string{"prefix " + overlap.Prefix + " (no machineRange: any machine id, 0-1023) overlaps prefix " + overlap.OtherPrefix + " (machineRange 690-699)",
		"give this fleet a range disjoint from the others'"} {
		assert.Contains(t, overlap.Error(), want)
	}
}
