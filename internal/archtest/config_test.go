package archtest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// configForbids are what service/config must not link: the lease
// libraries and their coordinators' clients (etcd's, and the gRPC it
// speaks). The loader reads the lease keys into plain values;
// internal/app makes the lease's options of them and validates them, so
// that a program that only reads the configuration (cmd/vesta-segment)
// carries no etcd client.
var configForbids = []string{
	module + "/service/etcdlease", module + "/service/pglease",
	"go.etcd.io/", "google.golang.org/grpc",
}

// TestConfigLinksNoLeaseClient checks that service/config links none of
// configForbids.
func TestConfigLinksNoLeaseClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	p, ok := listPackages(t)[module+"/service/config"]
	require.True(t, ok, "service/config")
	for _, d := range p.Deps {
		for _, f := range configForbids {
			if strings.HasPrefix(d, f) {
				t.Errorf("service/config links %s: the lease libraries belong to internal/app", d)
			}
		}
	}
}
