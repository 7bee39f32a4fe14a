package config

// postgres reads the keys only provider postgres takes: machineDSN
// (required by it) and machineTable.
func (r *reader) postgres(provider string) PostgresLease {
	p := PostgresLease{DSN: r.secret(KeyMachineDSN, dsnHasPassword), Table: r.str(KeyMachineTable, "")}
	if provider == ProviderPostgres && p.DSN == "" {
		r.fail(KeyMachineDSN, "", "a PostgreSQL DSN, e.g. postgres://user:password@host:5432/db (required by machineProvider postgres)")
	}
	return p
}
