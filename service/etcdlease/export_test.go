package etcdlease

// ClaimLowestFirst makes a lease claim the lowest free id (on) instead of
// a random one, so that a test can predict the id a node gets.
func ClaimLowestFirst(on bool) func(*Options) { return func(o *Options) { o.lowestFirst = on } }
