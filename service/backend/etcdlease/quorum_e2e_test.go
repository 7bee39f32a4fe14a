package etcdlease_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/vesta-go/vesta/internal/leasetest"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/service/backend/etcdtest"
)

// restLoad asks r for batches of IDs until stop is closed, counting every
// answer that is not an ID.
type restLoad struct {
	mu     sync.Mutex
	ids    []int64
	failed []string // when, and the answer
	done   chan struct{}
}

func startRestLoad(r *leasetest.Rest, stop <-chan struct{}) *restLoad {
	l := &restLoad{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			code, body := r.Get("/genid?count=1000")
			l.mu.Lock()
			if code != http.StatusOK {
				l.failed = append(l.failed, fmt.Sprintf("%s: %d %s", time.Now().Format("15:04:05.000"), code, body))
			} else {
				for _, f := range strings.Fields(body) {
					if id, err := strconv.ParseInt(f, 10, 64); err == nil {
						l.ids = append(l.ids, id)
					}
				}
			}
			l.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return l
}

func (l *restLoad) issued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ids)
}

// Three real server-rest nodes under load on a 3-member etcd cluster,
// TTL 10 s: two members (the leader among them) stop for 8 s, so etcd has
// no quorum, then start again. No node refuses a request meanwhile — not
// when its last renewal came just before the loss and the mark write after
// it failed (the mark is kept ahead of the validity), nor when the loss
// began just before a renewal (renewals come every RenewInterval) — and
// no ID is issued twice.
//
// Stress only: a 3-member cluster, three servers under load and an 8 s
// outage. A plain run covers the ride-out on a fake clock by leasekit's
// TestOutageShorterThanTheRideOutStopsNoNode.
func TestQuorumLossShorterThanTheTTLStopsNoNode(t *testing.T) {
	stresstest.Only(t, "a 3-member etcd cluster losing its quorum for 8 s under three real server-rest nodes")
	t.Parallel()
	members, err := etcdtest.StartCluster(t.TempDir(), 3)
	require.NoError(t, err)
	var endpoints []string
	for i, m := range members {
		t.Cleanup(func() { members[i].Close() })
		endpoints = append(endpoints, m.Clients[0].Addr().String())
	}
	prefix := prefixOf(t)
	var nodes []*leasetest.Rest
	for i := range 3 {
		nodes = append(nodes, leasetest.StartRest(t, nil, "--machine-provider", "etcd", "--etcd-endpoints", strings.Join(endpoints, ","),
			"--etcd-prefix", prefix, "--etcd-lease-ttl", "10s", "--etcd-node-name", fmt.Sprintf("quorum-%d", i),
			"--data-dir", t.TempDir(), "--segment-store", "off", "--log-level", "info"))
	}
	for _, n := range nodes {
		n.FirstID(t, 30*time.Second)
	}
	stop := make(chan struct{})
	var loads []*restLoad
	for _, n := range nodes {
		loads = append(loads, startRestLoad(n, stop))
	}
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
	}()
	// A few renewals and marks under load before the loss.
	time.Sleep(5 * time.Second)

	leader := slices.IndexFunc(members, func(m *embed.Etcd) bool { return m.Server.Leader() == m.Server.MemberID() })
	require.GreaterOrEqual(t, leader, 0, "a leader")
	stopped := []int{leader, (leader + 1) % 3}
	cfgs := map[int]embed.Config{}
	closing := time.Now()
	for _, i := range stopped {
		cfgs[i] = members[i].Config()
		members[i].Close()
	}
	lost := time.Now()
	time.Sleep(8 * time.Second)
	restart := time.Now()
	var wg sync.WaitGroup
	for _, i := range stopped {
		wg.Go(func() {
			m, err := etcdtest.Restart(cfgs[i])
			if err != nil {
				t.Errorf("restarting member %d: %v", i, err)
				return
			}
			members[i] = m
		})
	}
	wg.Wait()
	back := time.Now()
	// Every node issues again, well past the fence of any renewal before the loss.
	before := make([]int, len(loads))
	for i, l := range loads {
		before[i] = l.issued()
	}
	time.Sleep(10*time.Second - time.Since(back))
	for i, l := range loads {
		leasetest.Eventually(t, 30*time.Second, fmt.Sprintf("node %d issues after the loss", i), func() bool { return l.issued() > before[i] })
	}
	close(stop)
	var all []int64
	for i, l := range loads {
		<-l.done
		all = append(all, l.ids...)
		assert.Empty(t, l.failed, "node %d refused requests through the quorum loss (members stopped at %s, restarted %s, ready %s)\n%s",
			i, lost.Format("15:04:05.000"), restart.Format("15:04:05.000"), back.Format("15:04:05.000"), nodes[i].Logs())
	}
	slices.Sort(all)
	dups := 0
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			dups++
		}
	}
	assert.Zero(t, dups, "IDs issued twice")
	t.Logf("two members stopped (closing took %s) for %s, ready again %s after: %d IDs from 3 nodes, %d refused, %d twice",
		lost.Sub(closing).Round(time.Millisecond), restart.Sub(lost).Round(time.Millisecond), back.Sub(lost).Round(time.Millisecond),
		len(all), len(loads[0].failed)+len(loads[1].failed)+len(loads[2].failed), dups)
}
