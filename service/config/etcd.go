package config

import (
	"errors"
	"strings"

	"github.com/vesta-go/vesta/service/etcdlease"
	"github.com/vesta-go/vesta/service/pglease"
)

// etcdKeys are the keys of GroupEtcd; their defaults are etcdlease's.
func etcdKeys() []Key {
	return []Key{
		{Name: KeyEtcdEndpoints, Flag: "etcd-endpoints", Env: "VESTA_ETCD_ENDPOINTS", Group: GroupEtcd,
			Usage: "comma-separated etcd endpoints, host:port or https://host:port (provider etcd)"},
		{Name: KeyEtcdPrefix, Flag: "etcd-prefix", Env: "VESTA_ETCD_PREFIX", Group: GroupEtcd, Default: etcdlease.DefaultPrefix,
			Usage: "etcd key prefix (provider postgres: the fleet's name in the table); nodes sharing machine ids share it"},
		{Name: KeyEtcdLeaseTTL, Flag: "etcd-lease-ttl", Env: "VESTA_ETCD_LEASE_TTL", Group: GroupEtcd, Default: dur(etcdlease.DefaultTTL),
			Usage: "lease TTL (etcd or postgres), whole seconds 2s..1h: a cut-off node stops issuing within it, a crashed node's id is free after it"},
		{Name: KeyEtcdDialTimeout, Flag: "etcd-dial-timeout", Env: "VESTA_ETCD_DIAL_TIMEOUT", Group: GroupEtcd, Default: dur(etcdlease.DefaultDialTimeout),
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
		{Name: KeyEtcdNodeName, Flag: "etcd-node-name", Env: "VESTA_ETCD_NODE_NAME", Group: GroupEtcd, Varies: true,
			Usage: "this node's name in etcd or the PostgreSQL table (default hostname-pid)"},
		{Name: KeyMaxClockSkew, Flag: "max-clock-skew", Env: "VESTA_MAX_CLOCK_SKEW", Group: GroupEtcd, Default: dur(etcdlease.DefaultMaxClockSkew),
			Usage: "largest difference from the other live nodes' clocks (provider etcd; postgres: the database server's) before refusing to start"},
		{Name: KeyMachineRange, Flag: "machine-range", Env: "VESTA_MACHINE_RANGE", Group: GroupEtcd,
			Usage: "machine ids this fleet claims, first-last (e.g. 0-511; default all, 0-1023): give fleets (datacenters) disjoint ranges"},
		{Name: KeyMachineDSN, Flag: "machine-dsn", Env: "VESTA_MACHINE_DSN", Group: GroupEtcd,
			Usage: "PostgreSQL DSN of the machine-id table (provider postgres, required); one that holds a password is refused as a flag: give it in the environment or the config file"},
		{Name: KeyMachineTable, Flag: "machine-table", Env: "VESTA_MACHINE_TABLE", Group: GroupEtcd, Default: pglease.DefaultTable,
			Usage: "table of the machine-id claims (provider postgres), optionally schema.table; created when missing"},
	}
}

// etcd reads the etcd keys, which are validated whatever the provider;
// provider etcd requires endpoints.
func (r *reader) etcd(provider string) etcdlease.Options {
	o := etcdlease.Options{
		Prefix:       r.given(KeyEtcdPrefix, "", "a key prefix such as /vesta"),
		TTL:          r.duration(KeyEtcdLeaseTTL, etcdlease.DefaultTTL, etcdlease.MinTTL, etcdlease.MaxTTL),
		DialTimeout:  r.duration(KeyEtcdDialTimeout, etcdlease.DefaultDialTimeout, etcdlease.MinDialTimeout, etcdlease.MaxDialTimeout),
		Username:     r.str(KeyEtcdUsername, ""),
		Password:     r.secret(KeyEtcdPassword, always),
		CACertFile:   r.str(KeyEtcdCACert, ""),
		CertFile:     r.str(KeyEtcdCert, ""),
		KeyFile:      r.str(KeyEtcdKey, ""),
		NodeName:     r.str(KeyEtcdNodeName, ""),
		MaxClockSkew: r.duration(KeyMaxClockSkew, etcdlease.DefaultMaxClockSkew, etcdlease.MinMaxClockSkew, etcdlease.MaxMaxClockSkew),
	}
	if v := strings.TrimSpace(r.str(KeyMachineRange, "")); v != "" {
		if mr, err := etcdlease.ParseRange(v); err != nil {
			r.fail(KeyMachineRange, v, "first-last within 0-1023, first <= last (e.g. 0-511)")
		} else {
			o.MachineRange = &mr
		}
	}
	for _, ep := range strings.Split(r.str(KeyEtcdEndpoints, ""), ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			o.Endpoints = append(o.Endpoints, ep)
		}
	}
	if provider == ProviderEtcd && len(o.Endpoints) == 0 {
		r.fail(KeyEtcdEndpoints, "", "a comma-separated list of etcd endpoints (required by machineProvider etcd)")
	}
	return o
}

// etcdOptionKeys maps an etcdlease option to its config key.
var etcdOptionKeys = map[string]string{
	"Endpoints": KeyEtcdEndpoints, "Prefix": KeyEtcdPrefix, "TTL": KeyEtcdLeaseTTL,
	"DialTimeout": KeyEtcdDialTimeout, "Username": KeyEtcdUsername, "Password": KeyEtcdPassword,
	"CACertFile": KeyEtcdCACert, "CertFile": KeyEtcdCert, "KeyFile": KeyEtcdKey,
	"NodeName": KeyEtcdNodeName, "MaxClockSkew": KeyMaxClockSkew, "MachineRange": KeyMachineRange,
}

// checkEtcd validates the options of provider etcd; a wrong option fails
// naming its config key.
func (r *reader) checkEtcd(o etcdlease.Options) { r.checkLease(o.Validate(), etcdOptionKeys) }

// checkLease fails on err, the validation of a lease's options: an
// OptionError (etcdlease's and pglease's are one type) names its config
// key through keys.
func (r *reader) checkLease(err error, keys map[string]string) {
	var oe *etcdlease.OptionError
	switch {
	case errors.As(err, &oe):
		want := oe.Want
		if oe.Err != nil {
			want += " (" + oe.Err.Error() + ")"
		}
		r.fail(keys[oe.Option], oe.Value, want)
	case err != nil:
		r.err = err
	}
}
