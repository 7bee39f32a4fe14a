package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// SharedOptions are used by the first Shared call; set them in TestMain.
var SharedOptions Options

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Shared returns the test package's one server, starting it on first use.
// Without PostgreSQL binaries it skips the test with a loud message; any
// other start failure fails the test.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.srv, shared.err = Start(ctx, SharedOptions)
		if errors.Is(shared.err, ErrNoPostgres) {
			fmt.Fprintf(os.Stderr, "\n!!! %v: the PostgreSQL tests are SKIPPED !!!\n\n", shared.err)
		}
	})
	if errors.Is(shared.err, ErrNoPostgres) {
		t.Skipf("!!! SKIPPED: %v", shared.err)
	}
	if shared.err != nil {
		t.Fatalf("starting PostgreSQL: %v", shared.err)
	}
	return shared.srv
}

// StopShared destroys the shared server, if one was started. Call it from
// TestMain after m.Run.
func StopShared() {
	if shared.srv != nil {
		if err := shared.srv.Destroy(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: removing the server: %v\n", err)
		}
	}
}

// NewCluster starts a replicated Cluster for t, destroyed when t ends.
// Without PostgreSQL binaries it skips t with a loud message; any other
// failure fails it.
func NewCluster(t testing.TB, o ClusterOptions) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := StartCluster(ctx, o)
	if errors.Is(err, ErrNoPostgres) {
		fmt.Fprintf(os.Stderr, "\n!!! %v: the PostgreSQL replication tests are SKIPPED !!!\n\n", err)
		t.Skipf("!!! SKIPPED: %v", err)
	}
	if err != nil {
		t.Fatalf("starting a replicated PostgreSQL cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Destroy(); err != nil {
			t.Errorf("pgtest: removing the cluster: %v", err)
		}
	})
	return c
}
