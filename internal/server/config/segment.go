package config

import (
	"strings"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// Keys of segment mode (package segment).
const (
	KeySegmentStore = "segmentStore"
	KeySegmentDSN   = "segmentDSN"
	KeySegmentTags  = "segmentTags"
	// KeySegmentAllowAsyncFailover is the key pgstore's errors name.
	KeySegmentAllowAsyncFailover = segspec.AllowAsyncFailoverKey
)

// Segment is what the segment keys say (GroupSegment, GroupSegmentTags),
// each value checked against what its key allows. The program turns it
// into the store's configuration (stores.Config) and checks the DSN with
// the store's own parser (internal/server/segconfig), so that this loader links
// no database driver; the kinds, the tag syntax and a tag's defaults both
// apply are service/segment/segspec's.
type Segment struct {
	// Store is segmentStore: segspec.SQLite, segspec.Postgres or
	// segspec.Off.
	Store string
	// DSN is segmentDSN: PostgreSQL's connection string, or SQLite's file
	// path ("" for <DataDir>/segments.db). It may hold a password: never
	// log it.
	DSN string
	// AllowAsyncFailover is segmentAllowAsyncFailover (postgres only).
	AllowAsyncFailover bool
	// DataDir is the service's dataDir, which holds the SQLite file.
	DataDir string
	// Tags is segmentTags: the tags to create at start when missing.
	Tags []segspec.Tag
	// OnDemand says no segment key asked for segment mode: the SQLite file
	// is opened once it exists, never created unasked
	// (Segment.OnDemand).
	OnDemand bool
}

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

// segment reads the segment keys, segmentTags only when withTags; s
// carries the data dir already read. A PostgreSQL DSN's syntax is checked
// by the program with the store's parser (internal/server/segconfig).
func (r *reader) segment(s *service.Settings, withTags bool) Segment {
	c := Segment{DataDir: s.DataDir, DSN: r.secret(KeySegmentDSN, dsnHasPassword)}
	def := segspec.SQLite
	if s.NoDataDir && c.DSN == "" {
		def = segspec.Off
	}
	c.Store = r.oneOf(KeySegmentStore, def, segspec.Kinds()...)
	switch c.Store {
	case segspec.Off:
		if c.DSN != "" {
			r.conflict(KeySegmentDSN, KeySegmentStore, segspec.Off, "segmentStore off opens no store, so segmentDSN would be ignored")
		}
	case segspec.Postgres:
		if c.DSN == "" {
			r.fail(KeySegmentDSN, "", "a PostgreSQL DSN, e.g. postgres://user:password@host:5432/db (required by segmentStore postgres)")
		}
	case segspec.SQLite:
		if c.DSN == "" && s.NoDataDir {
			r.fail(KeySegmentStore, c.Store, "off, or a file path in segmentDSN: with noDataDir there is no data dir for segments.db")
		}
		if strings.ContainsAny(c.DSN, "?#") {
			r.fail(KeySegmentDSN, c.DSN, "a file path without '?' or '#' (segmentStore sqlite)")
		}
	}
	if c.AllowAsyncFailover = r.bool(KeySegmentAllowAsyncFailover, "", false); c.AllowAsyncFailover && c.Store != segspec.Postgres {
		r.conflict(KeySegmentAllowAsyncFailover, KeySegmentStore, c.Store, "only a PostgreSQL store (segmentStore postgres) fails over to a standby")
	}
	// Nothing asked for segment mode: the SQLite file is opened once it
	// exists, never created unasked (Segment.OnDemand).
	c.OnDemand = c.Store == segspec.SQLite && !r.isSet(KeySegmentStore) && !r.isSet(KeySegmentDSN) &&
		!(withTags && r.isSet(KeySegmentTags))
	if !withTags {
		return c
	}
	tags := r.str(KeySegmentTags, "")
	if tags != "" && c.Store == segspec.Off {
		r.fail(KeySegmentTags, tags, "no tags while segmentStore is off (set segmentStore to sqlite or postgres)")
	}
	var err error
	if c.Tags, err = segspec.ParseTags(tags); err != nil {
		r.fail(KeySegmentTags, tags, "a comma-separated list of tag[:initialMaxId[:step]], e.g. order,invoice:1000:500 ("+err.Error()+")")
	}
	return c
}
