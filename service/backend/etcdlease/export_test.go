package etcdlease

import "time"

// ClaimLowestFirst makes a lease claim the lowest free id (on) instead of
// a random one, so that a test can predict the id a node gets.
func ClaimLowestFirst(on bool) func(*Options) { return func(o *Options) { o.lowestFirst = on } }

// SetHistoryCheck makes l check etcd's history at most every every (on
// the service clock, after a renewal) and warn above warn uncompacted
// revisions, instead of every 5 minutes and above a million. Call it
// before Run.
func SetHistoryCheck(l *Lease, every time.Duration, warn int64) {
	l.health.Every, l.health.Warn = every, warn
}
