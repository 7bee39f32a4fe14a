package config

import (
	"strings"

	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/machineid"
)

// etcdKeys are the keys of GroupEtcd; their defaults are the leases'
// (service/backend/lease).
func etcdKeys() []Key {
	return []Key{
		{Name: KeyEtcdEndpoints, Flag: "etcd-endpoints", Env: "VESTA_ETCD_ENDPOINTS", Group: GroupEtcd,
			Usage: "comma-separated etcd endpoints, host:port or https://host:port (provider etcd)"},
		{Name: KeyLeasePrefix, Flag: "lease-prefix", Env: "VESTA_LEASE_PREFIX", Alias: Alias{"etcdPrefix", "etcd-prefix", "VESTA_ETCD_PREFIX"}, Group: GroupEtcd, Default: lease.DefaultPrefix,
			Usage: "the fleet's name: etcd's key prefix, or the fleet's rows in the PostgreSQL table; nodes sharing machine ids share it"},
		{Name: KeyLeaseTTL, Flag: "lease-ttl", Env: "VESTA_LEASE_TTL", Alias: Alias{"etcdLeaseTTL", "etcd-lease-ttl", "VESTA_ETCD_LEASE_TTL"}, Group: GroupEtcd, Default: dur(lease.DefaultTTL),
			Usage: "lease TTL (etcd or postgres), whole seconds 2s..1h: a cut-off node stops issuing within it, a crashed node's id is free after it"},
		{Name: KeyLeaseDialTimeout, Flag: "lease-dial-timeout", Env: "VESTA_LEASE_DIAL_TIMEOUT", Alias: Alias{"etcdDialTimeout", "etcd-dial-timeout", "VESTA_ETCD_DIAL_TIMEOUT"}, Group: GroupEtcd, Default: dur(lease.DefaultDialTimeout),
			Usage: "timeout of connecting to etcd or PostgreSQL (provider postgres) and of each request"},
		{Name: KeyEtcdUsername, Flag: "etcd-username", Env: "VESTA_ETCD_USERNAME", Group: GroupEtcd,
			Usage: "etcd user (with etcdPassword)"},
		{Name: KeyEtcdPassword, Flag: "etcd-password", Env: "VESTA_ETCD_PASSWORD", Group: GroupEtcd,
			Usage: "etcd password: from the environment or the config file; refused as a flag (every user of the host can read a command line)"},
		{Name: KeyEtcdCACert, Flag: "etcd-ca-cert", Env: "VESTA_ETCD_CA_CERT", Group: GroupEtcd,
			Usage: "PEM CA file that verifies the etcd servers (TLS)"},
		{Name: KeyEtcdCert, Flag: "etcd-cert", Env: "VESTA_ETCD_CERT", Group: GroupEtcd,
			Usage: "PEM client certificate for etcd (with etcdKey)"},
		{Name: KeyEtcdKey, Flag: "etcd-key", Env: "VESTA_ETCD_KEY", Group: GroupEtcd,
			Usage: "PEM client key for etcd (with etcdCert)"},
		{Name: KeyLeaseNodeName, Flag: "lease-node-name", Env: "VESTA_LEASE_NODE_NAME", Alias: Alias{"etcdNodeName", "etcd-node-name", "VESTA_ETCD_NODE_NAME"}, Group: GroupEtcd, Varies: true,
			Usage: "this node's name in etcd or the PostgreSQL table (default hostname-pid)"},
		{Name: KeyMaxClockSkew, Flag: "max-clock-skew", Env: "VESTA_MAX_CLOCK_SKEW", Group: GroupEtcd, Default: dur(lease.DefaultMaxClockSkew),
			Usage: "largest difference from the other live nodes' clocks (provider etcd; postgres: the database server's) before refusing to start"},
		{Name: KeyMachineRange, Flag: "machine-range", Env: "VESTA_MACHINE_RANGE", Group: GroupEtcd,
			Usage: "machine ids this fleet claims, first-last (e.g. 0-511; default all, 0-1023): give fleets (datacenters) disjoint ranges"},
		{Name: KeyMachineDSN, Flag: "machine-dsn", Env: "VESTA_MACHINE_DSN", Group: GroupEtcd,
			Usage: "PostgreSQL DSN of the machine-id table (provider postgres, required); one that holds a password is refused as a flag: give it in the environment or the config file"},
		{Name: KeyMachineTable, Flag: "machine-table", Env: "VESTA_MACHINE_TABLE", Group: GroupEtcd, Default: lease.DefaultTable,
			Usage: "table of the machine-id claims (provider postgres), optionally schema.table; created when missing"},
		{Name: KeyMachineAllowAsyncFailover, Flag: "machine-allow-async-failover", Env: "VESTA_MACHINE_ALLOW_ASYNC_FAILOVER", Group: GroupEtcd, Default: boolean(false),
			Usage: "accept a machineDSN naming several servers whose primary replicates asynchronously: a failover can then lose claims and marks and hand an id out twice (duplicate IDs)"},
	}
}

// lease reads the lease keys, which are validated whatever the provider:
// those both leases take into a Lease, etcd's into an EtcdLease (provider
// etcd requires endpoints) and postgres's into a PostgresLease
// (postgres.go).
func (r *reader) lease(provider string) (Lease, EtcdLease) {
	// Read in the order of the keys, which decides the error reported
	// when several values are wrong.
	var l Lease
	var e EtcdLease
	l.Prefix = r.given(KeyLeasePrefix, "", "a key prefix such as /vesta")
	l.TTL = r.duration(KeyLeaseTTL, lease.DefaultTTL, lease.MinTTL, lease.MaxTTL)
	l.DialTimeout = r.duration(KeyLeaseDialTimeout, lease.DefaultDialTimeout, lease.MinDialTimeout, lease.MaxDialTimeout)
	e.Username = r.str(KeyEtcdUsername, "")
	e.Password = r.secret(KeyEtcdPassword, always)
	e.CACertFile = r.str(KeyEtcdCACert, "")
	e.CertFile = r.str(KeyEtcdCert, "")
	e.KeyFile = r.str(KeyEtcdKey, "")
	l.NodeName = r.str(KeyLeaseNodeName, "")
	l.MaxClockSkew = r.duration(KeyMaxClockSkew, lease.DefaultMaxClockSkew, lease.MinMaxClockSkew, lease.MaxMaxClockSkew)
	if v := strings.TrimSpace(r.str(KeyMachineRange, "")); v != "" {
		if mr, err := machineid.ParseRange(v); err != nil {
			r.fail(KeyMachineRange, v, "first-last within 0-1023, first <= last (e.g. 0-511)")
		} else {
			l.MachineRange = &mr
		}
	}
	for _, ep := range strings.Split(r.str(KeyEtcdEndpoints, ""), ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			e.Endpoints = append(e.Endpoints, ep)
		}
	}
	if provider == ProviderEtcd && len(e.Endpoints) == 0 {
		r.fail(KeyEtcdEndpoints, "", "a comma-separated list of etcd endpoints (required by machineProvider etcd)")
	}
	return l, e
}
