package segspec

// Store kinds, the values of the segmentStore configuration key
// (stores.Config.Store).
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
	Off      = "off"
)

// Kinds lists the valid store kinds.
func Kinds() []string { return []string{SQLite, Postgres, Off} }

// AllowAsyncFailoverKey is the configuration key that accepts an
// asynchronous standby for the PostgreSQL store (pgstore's
// Options.AllowAsyncFailover), named by that store's errors and logs.
const AllowAsyncFailoverKey = "segmentAllowAsyncFailover"
