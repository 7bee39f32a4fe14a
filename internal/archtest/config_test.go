package archtest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// configForbids are what internal/server/config must not link: the lease
// libraries and their coordinators' clients (etcd's, and the gRPC it
// speaks), and segment mode's libraries and database drivers (pgx,
// modernc's SQLite). The loader reads the lease and segment keys into
// plain values; internal/server/app (and internal/server/segconfig) make the
// libraries' options of them and validate them, so that a program that
// only reads the configuration carries neither an etcd client nor a
// database driver it does not use.
var configForbids = []string{
	module + "/service/backend/etcdlease", module + "/service/backend/pglease",
	"go.etcd.io/", "google.golang.org/grpc",
	module + "/service/backend/stores", module + "/service/backend/pgstore", module + "/service/backend/sqlitestore",
	"github.com/jackc/", "modernc.org/",
}

// configForbidsExactly are packages internal/server/config must not link whose
// path is the prefix of a package it may link (service/segment/segspec).
var configForbidsExactly = []string{module + "/service/segment"}

// TestConfigLinksNoLeaseClient checks that internal/server/config links none of
// configForbids and configForbidsExactly.
func TestConfigLinksNoLeaseClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	p, ok := listPackages(t)[module+"/internal/server/config"]
	require.True(t, ok, "internal/server/config")
	for _, d := range p.Deps {
		for _, f := range configForbids {
			if strings.HasPrefix(d, f) {
				t.Errorf("internal/server/config links %s: the lease and segment libraries belong to internal/server/app", d)
			}
		}
		for _, f := range configForbidsExactly {
			if d == f {
				t.Errorf("internal/server/config links %s: the segment libraries belong to internal/server/app", d)
			}
		}
	}
}
