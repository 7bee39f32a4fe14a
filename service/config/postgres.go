package config

import (
	"github.com/vesta-go/vesta/service/etcdlease"
	"github.com/vesta-go/vesta/service/pglease"
)

// postgres reads the keys of provider postgres: machineDSN (required by
// it) and machineTable, and the lease keys it shares with etcd, already
// read into e.
func (r *reader) postgres(provider string, e etcdlease.Options) pglease.Options {
	o := pglease.Options{
		DSN:    r.secret(KeyMachineDSN, dsnHasPassword),
		Table:  r.str(KeyMachineTable, ""),
		Prefix: e.Prefix, TTL: e.TTL, DialTimeout: e.DialTimeout, NodeName: e.NodeName,
		MaxClockSkew: e.MaxClockSkew, MachineRange: e.MachineRange,
	}
	if provider == ProviderPostgres && o.DSN == "" {
		r.fail(KeyMachineDSN, "", "a PostgreSQL DSN, e.g. postgres://user:password@host:5432/db (required by machineProvider postgres)")
	}
	return o
}

// postgresOptionKeys maps a pglease option to its config key.
var postgresOptionKeys = map[string]string{
	"DSN": KeyMachineDSN, "Table": KeyMachineTable, "Prefix": KeyEtcdPrefix, "TTL": KeyEtcdLeaseTTL,
	"DialTimeout": KeyEtcdDialTimeout, "NodeName": KeyEtcdNodeName, "MaxClockSkew": KeyMaxClockSkew, "MachineRange": KeyMachineRange,
}

// checkPostgres validates the options of provider postgres; a wrong
// option fails naming its config key (never showing the DSN).
func (r *reader) checkPostgres(o pglease.Options) { r.checkLease(o.Validate(), postgresOptionKeys) }
