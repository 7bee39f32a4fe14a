// Command soaketcd runs one single-member etcd server (the embedded etcd
// of go.etcd.io/etcd/server/v3/embed) as its own process on 127.0.0.1, for
// scripts/soak.sh, which stops and continues it (SIGSTOP/SIGCONT).
//
//	soaketcd -dir DIR -port PORT
//
// It serves clients on 127.0.0.1:PORT and peers on 127.0.0.1:PORT+1,
// prints "ready" on stdout once serving, and runs until killed or
// interrupted.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dir := flag.String("dir", "", "data dir (required)")
	port := flag.Int("port", 2379, "client port on 127.0.0.1; the peer port is the next one")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "soaketcd: -dir is required")
		os.Exit(2)
	}
	cfg := embed.NewConfig()
	cfg.Dir = *dir
	cu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *port)}
	pu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *port+1)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.LogLevel = "error"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soaketcd:", err)
		os.Exit(1)
	}
	select {
	case <-e.Server.ReadyNotify():
		fmt.Println("ready")
	case <-time.After(60 * time.Second):
		fmt.Fprintln(os.Stderr, "soaketcd: etcd did not become ready within 60s")
		e.Close()
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case err := <-e.Err():
		fmt.Fprintln(os.Stderr, "soaketcd:", err)
		e.Close()
		os.Exit(1)
	case <-sig:
		e.Close()
	}
}
