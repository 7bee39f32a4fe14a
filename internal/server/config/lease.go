package config

import (
	"time"

	"github.com/vesta-go/vesta/service/machineid"
)

// Lease is what the keys shared by the machine-id leases of providers
// etcd and postgres say (GroupEtcd), each value checked against the
// range its key allows. The program turns Lease and EtcdLease or
// PostgresLease into the lease's options and validates them with the
// lease library (internal/server/app), so that this loader links neither etcd's
// client nor pgx; the defaults both apply are package lease's (service/backend/lease).
type Lease struct {
	Prefix       string        // leasePrefix; "" for the lease's default
	TTL          time.Duration // leaseTTL
	DialTimeout  time.Duration // leaseDialTimeout
	NodeName     string        // leaseNodeName; "" for hostname-pid
	MaxClockSkew time.Duration // maxClockSkew
	// MachineRange is machineRange (etcdlease.Range, pglease.Range); nil
	// means every machine id.
	MachineRange *machineid.Range
}

// EtcdLease is what the keys only the etcd lease takes say.
type EtcdLease struct {
	Endpoints                     []string // etcdEndpoints
	Username, Password            string   // etcdUsername, etcdPassword
	CACertFile, CertFile, KeyFile string   // etcdCACert, etcdCert, etcdKey
}

// PostgresLease is what the keys only the PostgreSQL lease takes say.
type PostgresLease struct {
	// DSN is machineDSN; it may hold a password: never log it.
	DSN string
	// Table is machineTable; "" for the lease's default.
	Table string
	// AllowAsyncFailover is machineAllowAsyncFailover.
	AllowAsyncFailover bool
}
