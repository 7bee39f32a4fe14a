// Package callmetrics counts the calls of both doors — HTTP requests by
// route and status code, RPC calls by method and code, their latency, and
// the IDs they issue — for Prometheus, at a cost a call of a few hundred
// nanoseconds can carry.
//
// client_golang's counters and histograms keep one set of atomic words per
// series, which every core writes: on a busy server each call moves those
// cache lines between cores, and a histogram's observation takes four
// atomic operations on them. Here each series keeps its words in stripes,
// one per core in use (a stripe is taken from a sync.Pool, which hands a
// goroutine the one its core used last), and a scrape sums the stripes.
// The families, names and labels are those of a CounterVec and a
// HistogramVec; only the successful outcome is striped, the rest are
// counted in a shared word each.
package callmetrics
