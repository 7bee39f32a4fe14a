package etcdlease_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vesta-go/vesta/internal/nettest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
	"github.com/vesta-go/vesta/service/backend/etcdtest"
)

// On a 3-member etcd cluster, one member hung (its client traffic held,
// as a stopped process would) never fences a node: a renewal sent to it
// gives up after a small part of the TTL and the retry goes to another.
// A node whose key is then deleted claims its own id back at once, its
// own mark (a TTL ahead) notwithstanding.
func TestThreeMemberClusterWithAHungMember(t *testing.T) {
	stresstest.Only(t, "a 3-member etcd cluster, each member held in turn (fast cover: leasekit's "+
		"TestRenewalNeverWaitsLongOnAHungMember on a fake clock, TestLostClaimReclaimsItsOwnId)")
	t.Parallel()
	members, err := etcdtest.StartCluster(t.TempDir(), 3)
	require.NoError(t, err)
	var endpoints []string
	var proxies []*nettest.Proxy
	for _, m := range members {
		t.Cleanup(m.Close)
		px := nettest.NewProxy(t, m.Clients[0].Addr().String())
		proxies, endpoints = append(proxies, px), append(endpoints, px.Addr())
	}
	n := startNode(t, "member-hung", func(o *etcdlease.Options) {
		o.Endpoints, o.TTL, o.MachineRange = endpoints, 6*time.Second, &etcdlease.Range{First: 700, Last: 701}
	})
	m := n.svc.Stats().Machine
	fenced := 0
	for _, px := range proxies {
		px.Freeze()
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if _, err := n.svc.GenId(bg); errors.Is(err, intf.ErrFenced) {
				fenced++
			}
		}
		px.Thaw()
	}
	assert.Zero(t, fenced, "calls fenced while one member of three hung")
	assert.Zero(t, n.svc.Stats().Fences, "never fenced")

	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Delete(bg, n.lease.Keys().Machine(m))
	require.NoError(t, err)
	eventually(t, 10*time.Second, "fenced, then issuing again", func() bool {
		_, err := n.svc.GenId(bg)
		return n.svc.Stats().Fences == 1 && err == nil
	})
	assert.Equal(t, m, n.svc.Stats().Machine, "its own id, not the other of its range")
}
