package pglease

// ClaimLowestFirst makes a lease claim the lowest free id instead of a
// random one, so that a test can predict the id a node gets.
func ClaimLowestFirst(o *Options) { o.lowestFirst = true }
