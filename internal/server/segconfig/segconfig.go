// Package segconfig makes segment mode's store configuration
// (stores.Config) of a loaded configuration. internal/server/config reads the
// segment keys into a plain config.Segment without linking a database
// driver; Stores checks what only the store library can check (a
// PostgreSQL DSN's syntax, with pgstore's parser) and names the config
// key of a wrong value, as the loader does. internal/server/app (before anything
// starts, in Setup) and cmd/vesta-segment (which links no etcd client)
// both use it.
package segconfig

import (
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/service/backend/pgstore"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// Stores is the store configuration cfg's segment keys give, logging with
// the service's logger. A DSN of segmentStore postgres that PostgreSQL's
// parser refuses is a *config.ValueError naming segmentDSN and where it
// was set (never showing the DSN: it may hold a password).
func Stores(cfg config.Config) (stores.Config, error) {
	s := cfg.Segment
	if s.Store == segspec.Postgres {
		if _, err := pgstore.ParseDSN(s.DSN); err != nil {
			return stores.Config{}, cfg.KeyError(config.KeySegmentDSN, s.DSN, "a PostgreSQL URL or key=value DSN ("+err.Error()+")")
		}
	}
	return stores.Config{
		Store: s.Store, DSN: s.DSN, AllowAsyncFailover: s.AllowAsyncFailover, DataDir: s.DataDir,
		Tags: s.Tags, OnDemand: s.OnDemand,
		Settings: segment.Settings{Logger: cfg.Service.Logger},
	}, nil
}
