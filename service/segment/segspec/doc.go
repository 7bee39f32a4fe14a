// Package segspec holds what segment mode's configuration (internal/server/config)
// and its libraries (segment, pgstore, stores) agree on, in a package that
// links neither a database driver nor the configuration loader: the store
// kinds (the values of segmentStore), the syntax of a list of tags to
// create at start (segmentTags, ParseTags) with a tag's defaults and
// limits, and the configuration key the PostgreSQL store's errors name
// (AllowAsyncFailoverKey). So the loader checks these values without
// linking pgx or SQLite, and each is written once.
package segspec
