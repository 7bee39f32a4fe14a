package config

import (
	"strings"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/pgstore"
)

// Keys of segment mode (package segment).
const (
	KeySegmentStore = "segmentStore"
	KeySegmentDSN   = "segmentDSN"
	KeySegmentTags  = "segmentTags"
)

func segmentKeys() []Key {
	return []Key{
		{KeySegmentStore, "segment-store", "VESTA_SEGMENT_STORE", "", segment.StoreSQLite, "segment mode's store: sqlite, postgres or off (default sqlite; off with noDataDir and no segmentDSN)"},
		{KeySegmentDSN, "segment-dsn", "VESTA_SEGMENT_DSN", "", "", "postgres: the DSN (required); sqlite: the file path (default <dataDir>/segments.db)"},
		{KeySegmentTags, "segment-tags", "VESTA_SEGMENT_TAGS", "", "", "segment tags created at start when missing: tag[:initialMaxId[:step]],... e.g. order,invoice:1000:500"},
	}
}

// segment reads the segment keys into a segment.Config; s carries the
// data dir already read.
func (r *reader) segment(s *service.Settings) segment.Config {
	c := segment.Config{DataDir: s.DataDir, DSN: r.str(KeySegmentDSN, "")}
	def := segment.StoreSQLite
	if s.NoDataDir && c.DSN == "" {
		def = segment.StoreOff
	}
	c.Store = r.oneOf(KeySegmentStore, def, segment.StoreKinds()...)
	switch c.Store {
	case segment.StorePostgres:
		if c.DSN == "" {
			r.fail(KeySegmentDSN, "", "a PostgreSQL DSN, e.g. postgres://user:password@host:5432/db (required by segmentStore postgres)")
		} else if _, err := pgstore.ParseDSN(c.DSN); err != nil {
			r.fail(KeySegmentDSN, "(not shown: it may hold a password)", "a PostgreSQL URL or key=value DSN ("+err.Error()+")")
		}
	case segment.StoreSQLite:
		if c.DSN == "" && s.NoDataDir {
			r.fail(KeySegmentStore, c.Store, "off, or a file path in segmentDSN: with noDataDir there is no data dir for segments.db")
		}
		if strings.ContainsAny(c.DSN, "?#") {
			r.fail(KeySegmentDSN, c.DSN, "a file path without '?' or '#' (segmentStore sqlite)")
		}
	}
	tags := r.str(KeySegmentTags, "")
	if tags != "" && c.Store == segment.StoreOff {
		r.fail(KeySegmentTags, tags, "no tags while segmentStore is off (set segmentStore to sqlite or postgres)")
	}
	var err error
	if c.Tags, err = segment.ParseTags(tags); err != nil {
		r.fail(KeySegmentTags, tags, "a comma-separated list of tag[:initialMaxId[:step]], e.g. order,invoice:1000:500 ("+err.Error()+")")
	}
	return c
}
