// Package segbuf is the double buffer of segment IDs shared by the embedded
// generator (service/segment) and the Go client's local ranges (client):
// a current range and a spare one loaded ahead of need, with Leaf's
// dynamic step. It links nothing but the standard library, so the client
// stays free of third-party modules.
//
// The hot path, Set.TryNext, is one pointer load (the hot range, which
// carries the key of the tag string it serves), one atomic add on the
// range's counter and a bounds check: no mutex, no channel, no
// allocation, no map lookup, small enough to be inlined. The
// caller that takes the ID at the range's threshold (10% used) starts the
// load of the spare in the background, once per range (single flight).
// A caller that finds the current range used up takes the slow path,
// Buffer.Fill: it switches to the spare (under the buffer's mutex, once per
// range) or waits for the load in flight, honouring its context and
// Policy.WaitTimeout.
//
// A range is never served twice: each one comes from a single load, its
// IDs are handed out by an atomic counter that only grows, and a range that
// starts below the end of the last one received is refused.
package segbuf
