// Package etcdtest starts a one-member etcd server in this process, on
// free loopback ports, for tests and the scripts that simulate a fleet
// (go.etcd.io/etcd/server/v3/embed). It logs nothing.
package etcdtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/vesta-go/vesta/intf"
)

// Config adjusts the server before it starts (e.g. a quota, fsync on).
type Config func(*embed.Config)

// Start starts etcd with its data under dir. By default it skips fsync
// (tests; pass a Config to turn it back on) and takes transactions of up
// to 1024 operations (a claim of every machine id at once). Picking a free
// port and binding it are two steps, so it retries when another process
// takes the port in between. Close the server when done.
func Start(dir string, configs ...Config) (*embed.Etcd, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		cfg := embed.NewConfig()
		cfg.Name = "vesta-test"
		cfg.Dir = fmt.Sprintf("%s/%d", dir, attempt)
		cfg.LogLevel = "error"
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cfg.UnsafeNoFsync = true
		cfg.MaxTxnOps = intf.MaxMachine + 1
		client, peer := FreeURL(), FreeURL()
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
		for _, c := range configs {
			c(cfg)
		}
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			lastErr = err
			continue
		}
		select {
		case <-e.Server.ReadyNotify():
			return e, nil
		case <-time.After(time.Minute):
			e.Close()
			return nil, errors.New("etcdtest: etcd not ready within a minute")
		}
	}
	return nil, lastErr
}

// FreeURL is an http URL on a loopback port free a moment ago.
func FreeURL() url.URL {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}

// StableURL is an http URL on a loopback port free a moment ago, below
// the kernel's ephemeral range (32768 and up on Linux): while a member is
// stopped, no outgoing connection can take its port as a source port, so
// Restart can listen on it again.
func StableURL() url.URL {
	for range 100 {
		port := 20000 + rand.IntN(12000)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			defer l.Close()
			return url.URL{Scheme: "http", Host: l.Addr().String()}
		}
	}
	return FreeURL()
}

// StartCluster starts n members of one etcd cluster in this process, with
// their data under dir; close each when done.
func StartCluster(dir string, n int) ([]*embed.Etcd, error) {
	cfgs := make([]*embed.Config, n)
	initial := ""
	for i := range cfgs {
		cfg := embed.NewConfig()
		cfg.Name, cfg.Dir = fmt.Sprintf("m%d", i), fmt.Sprintf("%s/m%d", dir, i)
		cfg.LogLevel, cfg.ZapLoggerBuilder = "error", embed.NewZapLoggerBuilder(zap.NewNop())
		cfg.UnsafeNoFsync = true
		client, peer := StableURL(), StableURL()
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		if i > 0 {
			initial += ","
		}
		initial += cfg.Name + "=" + peer.String()
		cfgs[i] = cfg
	}
	var members []*embed.Etcd
	closeAll := func() {
		for _, m := range members {
			m.Close()
		}
	}
	for _, cfg := range cfgs {
		cfg.InitialCluster = initial
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			closeAll()
			return nil, err
		}
		members = append(members, e)
	}
	for _, m := range members {
		select {
		case <-m.Server.ReadyNotify():
		case <-time.After(time.Minute):
			closeAll()
			return nil, errors.New("etcdtest: cluster not ready within a minute")
		}
	}
	return members, nil
}

// Run runs a test package's tests (TestMain's m) with one etcd started for
// them in a temp dir, handing its client address to endpoint first, and
// returns the exit code.
func Run(m interface{ Run() int }, endpoint *string) int {
	dir, err := os.MkdirTemp("", "vesta-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	e, err := Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded etcd:", err)
		return 1
	}
	defer e.Close()
	*endpoint = e.Clients[0].Addr().String()
	return m.Run()
}

// Restart starts again a member stopped with Close, from cfg (its
// Config(), read before the Close): the same name, data and addresses.
func Restart(cfg embed.Config) (*embed.Etcd, error) {
	e, err := embed.StartEtcd(&cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(time.Minute):
		e.Close()
		return nil, errors.New("etcdtest: restarted member not ready within a minute")
	}
}
