package config

import (
	"strings"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/pgstore"
	"github.com/vesta-go/vesta/service/segment/stores"
)

// Keys of segment mode (package segment).
const (
	KeySegmentStore = "segmentStore"
	KeySegmentDSN   = "segmentDSN"
	KeySegmentTags  = "segmentTags"
	// KeySegmentAllowAsyncFailover is pgstore.AllowAsyncFailoverKey.
	KeySegmentAllowAsyncFailover = pgstore.AllowAsyncFailoverKey
)

// segmentKeys are the keys of GroupSegment and GroupSegmentTags.
func segmentKeys() []Key {
	return []Key{
		{Name: KeySegmentStore, Flag: "segment-store", Env: "VESTA_SEGMENT_STORE", Group: GroupSegment, Varies: true,
			Usage: "segment mode's store: sqlite, postgres or off (default: sqlite, opened at start when a segment key is set; else its file is opened once it exists, never created unasked; off with noDataDir and no segmentDSN)"},
		{Name: KeySegmentDSN, Flag: "segment-dsn", Env: "VESTA_SEGMENT_DSN", Group: GroupSegment, Varies: true,
			Usage: "postgres: the DSN (required; one that holds a password is refused as a flag: give it in the environment or the config file); sqlite: the file path (default <dataDir>/segments.db)"},
		{Name: KeySegmentAllowAsyncFailover, Flag: "segment-allow-async-failover", Env: "VESTA_SEGMENT_ALLOW_ASYNC_FAILOVER", Group: GroupSegment, Default: boolean(false),
			Usage: "postgres: accept a segmentDSN naming several servers whose primary replicates asynchronously (synchronous_standby_names empty or synchronous_commit below on); a failover can then repeat segment IDs (docs/segment.md)"},
		{Name: KeySegmentTags, Flag: "segment-tags", Env: "VESTA_SEGMENT_TAGS", Group: GroupSegmentTags,
			Usage: "segment tags created at start when missing: tag[:initialMaxId[:step]],... e.g. order,invoice:1000:500"},
	}
}

// segment reads the segment keys into a stores.Config, segmentTags only
// when withTags; s carries the data dir already read.
func (r *reader) segment(s *service.Settings, withTags bool) stores.Config {
	c := stores.Config{DataDir: s.DataDir, DSN: r.secret(KeySegmentDSN, dsnHasPassword)}
	def := stores.SQLite
	if s.NoDataDir && c.DSN == "" {
		def = stores.Off
	}
	c.Store = r.oneOf(KeySegmentStore, def, stores.Kinds()...)
	switch c.Store {
	case stores.Off:
		if c.DSN != "" {
			r.conflict(KeySegmentDSN, KeySegmentStore, stores.Off, "segmentStore off opens no store, so segmentDSN would be ignored")
		}
	case stores.Postgres:
		if c.DSN == "" {
			r.fail(KeySegmentDSN, "", "a PostgreSQL DSN, e.g. postgres://user:password@host:5432/db (required by segmentStore postgres)")
		} else if _, err := pgstore.ParseDSN(c.DSN); err != nil {
			r.fail(KeySegmentDSN, c.DSN, "a PostgreSQL URL or key=value DSN ("+err.Error()+")") // not shown: secretKeys
		}
	case stores.SQLite:
		if c.DSN == "" && s.NoDataDir {
			r.fail(KeySegmentStore, c.Store, "off, or a file path in segmentDSN: with noDataDir there is no data dir for segments.db")
		}
		if strings.ContainsAny(c.DSN, "?#") {
			r.fail(KeySegmentDSN, c.DSN, "a file path without '?' or '#' (segmentStore sqlite)")
		}
	}
	if c.AllowAsyncFailover = r.bool(KeySegmentAllowAsyncFailover, "", false); c.AllowAsyncFailover && c.Store != stores.Postgres {
		r.conflict(KeySegmentAllowAsyncFailover, KeySegmentStore, c.Store, "only a PostgreSQL store (segmentStore postgres) fails over to a standby")
	}
	// Nothing asked for segment mode: the SQLite file is opened once it
	// exists, never created unasked (stores.Config.OnDemand).
	c.OnDemand = c.Store == stores.SQLite && !r.isSet(KeySegmentStore) && !r.isSet(KeySegmentDSN) &&
		!(withTags && r.isSet(KeySegmentTags))
	if !withTags {
		return c
	}
	tags := r.str(KeySegmentTags, "")
	if tags != "" && c.Store == stores.Off {
		r.fail(KeySegmentTags, tags, "no tags while segmentStore is off (set segmentStore to sqlite or postgres)")
	}
	var err error
	if c.Tags, err = segment.ParseTags(tags); err != nil {
		r.fail(KeySegmentTags, tags, "a comma-separated list of tag[:initialMaxId[:step]], e.g. order,invoice:1000:500 ("+err.Error()+")")
	}
	return c
}
