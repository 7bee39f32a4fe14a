package stores

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/internal/outage"
	"github.com/vesta-go/vesta/service/backend/pgstore"
	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/internal/datadir"
	"github.com/vesta-go/vesta/service/internal/segdefault"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// ErrDisabled: Open was asked for segment mode while the configuration
// turns it off (segmentStore off).
var ErrDisabled = errors.New("segment mode is off (segmentStore off)")

// Config is the segment part of the vesta-go configuration (config.Config's
// Segment field): which store, where, the tags to create at start, and the
// Generator's tuning.
type Config struct {
	// Store is segspec.SQLite (also for ""), segspec.Postgres or
	// segspec.Off.
	Store string
	// DSN is the PostgreSQL connection string, or for SQLite an optional
	// file path (default DataDir/segments.db).
	DSN string
	// AllowAsyncFailover accepts a PostgreSQL DSN naming several servers
	// whose primary replicates asynchronously (pgstore.Options): a
	// failover can then repeat IDs. Postgres only.
	AllowAsyncFailover bool
	// DataDir holds the SQLite file when DSN is empty; "" means the
	// service's default ($XDG_STATE_HOME/vesta-go, else
	// ~/.local/state/vesta-go).
	DataDir string
	// Tags are created at start when missing (existing rows are left as
	// they are); segspec.ParseTags reads a list of them.
	Tags []segspec.Tag
	// OnDemand says the configuration did not ask for segment mode (the
	// loader sets it when none of segmentStore, segmentDSN and
	// segmentTags is set): the SQLite file is then opened only once it
	// exists — at start when it does, else at the first use that finds
	// it — and only creating a tag creates it. So a server that never
	// serves segment IDs leaves no segments.db behind, and tags created
	// later (vesta-segment create-tag) are served at their first request.
	// For the SQLite store only.
	OnDemand bool
	// Settings tunes the Generator; its Store field is ignored (Open sets it).
	Settings segment.Settings
}

// Enabled reports whether segment mode is on.
func (c Config) Enabled() bool { return c.Store != segspec.Off }

// SQLitePath is the SQLite file Open uses: DSN, else DataDir/segments.db.
func (c Config) SQLitePath() (string, error) {
	if c.DSN != "" {
		return c.DSN, nil
	}
	dir := c.DataDir
	if dir == "" {
		d, err := datadir.Default()
		if err != nil {
			return "", err
		}
		dir = d
	}
	return filepath.Join(dir, sqlitestore.FileName), nil
}

// OpenStore opens the configured store and creates the table if needed
// (an OnDemand store: once its file exists).
func OpenStore(ctx context.Context, c Config) (segstore.Store, error) {
	var (
		st  segstore.Store
		err error
	)
	switch c.Store {
	case segspec.SQLite, "":
		var path string
		if path, err = c.SQLitePath(); err == nil && c.OnDemand {
			st = &onDemandStore{path: path}
		} else if err == nil {
			st, err = sqlitestore.Open(ctx, path)
		}
	case segspec.Postgres:
		st, err = pgstore.OpenOptions(ctx, c.DSN, pgstore.Options{AllowAsyncFailover: c.AllowAsyncFailover, Logger: c.Settings.Logger})
	case segspec.Off:
		return nil, ErrDisabled
	default:
		return nil, fmt.Errorf("%w: segment store %q: want one of %v", intf.ErrInvalidArgument, c.Store, segspec.Kinds())
	}
	if err != nil {
		return nil, err
	}
	if err := st.Init(ctx); err != nil {
		_ = st.Close()
		return nil, err
	}
	return st, nil
}

// openTimeoutLoads is how many LoadTimeouts Open allows the database in
// all: connecting, creating the table and tags, reading the tag list.
const openTimeoutLoads = 3

// Open opens the configured store, creates the configured tags that are
// missing, and starts a Generator on it, all within three LoadTimeouts (15
// s by default), so that a database that accepts connections but never
// answers fails the start instead of hanging it. It returns ErrDisabled
// when the configuration turns segment mode off. Close the Generator when
// done (it closes the store). An error that says the store does not answer
// now (network, timeout, a PostgreSQL that refuses connections for the
// moment) matches intf.ErrUnavailable, worth retrying; any other (a wrong
// password, a SQLite file that cannot be created) is for the operator.
func Open(ctx context.Context, c Config) (*segment.Generator, error) {
	g, err := open(ctx, c)
	if err != nil && ctx.Err() == nil && outage.Silent(err) {
		err = outage.Error{Err: err}
	}
	return g, err
}

func open(ctx context.Context, c Config) (*segment.Generator, error) {
	timeout := c.Settings.LoadTimeout
	if timeout <= 0 {
		timeout = segdefault.LoadTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeoutLoads*timeout)
	defer cancel()
	st, err := OpenStore(ctx, c)
	if err != nil {
		return nil, err
	}
	created, err := segstore.EnsureTags(ctx, st, c.Tags)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	s := c.Settings
	s.Store = st
	g, err := segment.New(ctx, s)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	if len(created) > 0 {
		cmp.Or(s.Logger, slog.Default()).Info("segment: created tags", "tags", created)
	}
	return g, nil
}
