package etcdlease_test

import (
	"testing"

	"github.com/vesta-go/vesta/internal/nettest"
)

// newProxy is a proxy in front of etcd that a test can cut (nettest.Proxy).
func newProxy(t testing.TB, target string) *nettest.Proxy { return nettest.NewProxy(t, target) }
