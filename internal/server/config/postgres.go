package config

// postgres reads the keys only provider postgres takes: machineDSN
// (required by it), machineTable and machineAllowAsyncFailover.
func (r *reader) postgres(provider string) PostgresLease {
	p := PostgresLease{DSN: r.secret(KeyMachineDSN, dsnHasPassword), Table: r.str(KeyMachineTable, ""),
		AllowAsyncFailover: r.bool(KeyMachineAllowAsyncFailover, "", false)}
	if p.AllowAsyncFailover && provider != ProviderPostgres {
		r.conflict(KeyMachineAllowAsyncFailover, KeyMachineProvider, provider, "only the PostgreSQL lease (machineProvider postgres) fails over to a standby")
	}
	if provider == ProviderPostgres && p.DSN == "" {
		r.fail(KeyMachineDSN, "", "a PostgreSQL DSN, e.g. postgres://user:password@host:5432/db (required by machineProvider postgres)")
	}
	return p
}
