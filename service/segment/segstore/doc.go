// Package segstore is what a segment store implements and what defines a
// tag: the Store of plain tags (TagInfo) and the PeriodStore of period
// tags (PeriodTag, Grouping, Format), the errors both return, and
// EnsureTags, which creates the tags a configuration names. The stores of
// service/backend (PostgreSQL, SQLite) implement it; service/segment's
// Generator reads through it, and an embedder needs it only to write a
// store of their own or to create tags.
package segstore
