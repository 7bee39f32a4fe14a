package app

import (
	"errors"
	"fmt"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/backend/pglease"
	"github.com/vesta-go/vesta/service/machineid"
)

// leaseCommon are the options both leases take from cfg's lease keys; it logs
// with the service's logger.
func leaseCommon(cfg config.Config) lease.Common {
	l := cfg.Lease
	return lease.Common{Prefix: l.Prefix, TTL: l.TTL, DialTimeout: l.DialTimeout, NodeName: l.NodeName,
		MaxClockSkew: l.MaxClockSkew, MachineRange: l.MachineRange, Logger: cfg.Service.Logger}
}

// etcdOptions are the options of the etcd lease cfg's lease keys give (provider etcd).
func etcdOptions(cfg config.Config) etcdlease.Options {
	e := cfg.Etcd
	return etcdlease.Options{
		Endpoints: e.Endpoints, Common: leaseCommon(cfg),
		CACertFile: e.CACertFile, CertFile: e.CertFile, KeyFile: e.KeyFile,
		Username: e.Username, Password: e.Password,
	}
}

// postgresOptions are the options of the PostgreSQL lease cfg's lease keys give
// (provider postgres).
func postgresOptions(cfg config.Config) pglease.Options {
	p := cfg.Postgres
	return pglease.Options{DSN: p.DSN, Table: p.Table, AllowAsyncFailover: p.AllowAsyncFailover, Common: leaseCommon(cfg)}
}

// etcdOptionKeys maps an etcdlease option to its config key.
var etcdOptionKeys = map[string]string{
	"Endpoints": config.KeyEtcdEndpoints, "Prefix": config.KeyLeasePrefix, "TTL": config.KeyLeaseTTL,
	"DialTimeout": config.KeyLeaseDialTimeout, "Username": config.KeyEtcdUsername, "Password": config.KeyEtcdPassword,
	"CACertFile": config.KeyEtcdCACert, "CertFile": config.KeyEtcdCert, "KeyFile": config.KeyEtcdKey,
	"NodeName": config.KeyLeaseNodeName, "MaxClockSkew": config.KeyMaxClockSkew, "MachineRange": config.KeyMachineRange,
}

// postgresOptionKeys maps a pglease option to its config key.
var postgresOptionKeys = map[string]string{
	"DSN": config.KeyMachineDSN, "Table": config.KeyMachineTable, "Prefix": config.KeyLeasePrefix, "TTL": config.KeyLeaseTTL,
	"DialTimeout": config.KeyLeaseDialTimeout, "NodeName": config.KeyLeaseNodeName, "MaxClockSkew": config.KeyMaxClockSkew,
	"MachineRange": config.KeyMachineRange,
}

// checkLease validates the lease options cfg gives (provider etcd or
// postgres) as the lease library's New will, reading the TLS files,
// without making the lease: Setup calls it after loading, so that a wrong
// option is refused before anything starts. A wrong option is a
// *config.ValueError naming its config key and where it was set (never
// showing a password or a DSN).
func checkLease(cfg config.Config) error {
	switch cfg.MachineProvider {
	case config.ProviderEtcd:
		return keyed(cfg, etcdOptions(cfg).Validate(), etcdOptionKeys)
	case config.ProviderPostgres:
		return keyed(cfg, postgresOptions(cfg).Validate(), postgresOptionKeys)
	}
	return nil
}

// newLease makes the lease of cfg's provider: the etcd lease of provider
// etcd, the PostgreSQL lease of provider postgres, nil for the others.
func newLease(cfg config.Config) (machineid.Lease, error) {
	switch cfg.MachineProvider {
	case config.ProviderEtcd:
		lease, err := etcdlease.New(etcdOptions(cfg))
		if err != nil {
			return nil, fmt.Errorf("etcd lease: %w", keyed(cfg, err, etcdOptionKeys))
		}
		return lease, nil
	case config.ProviderPostgres:
		lease, err := pglease.New(postgresOptions(cfg))
		if err != nil {
			return nil, fmt.Errorf("postgres lease: %w", keyed(cfg, err, postgresOptionKeys))
		}
		return lease, nil
	}
	return nil, nil
}

// keyed turns err, a lease's refusal of an option (an OptionError:
// etcdlease's and pglease's are one type), into the config's refusal of
// its key (keys); any other error is returned as it is.
func keyed(cfg config.Config, err error, keys map[string]string) error {
	var oe *etcdlease.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	want := oe.Want
	if oe.Err != nil {
		want += " (" + oe.Err.Error() + ")"
	}
	return cfg.KeyError(keys[oe.Option], oe.Value, want)
}
