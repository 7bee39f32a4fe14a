// Package statuspage is the live status page of a vesta-go server: GET
// /status, one JSON document of what an on-call engineer looks at (the
// machine id and where it came from, its lease, the layout, IDs issued
// and the share of the sequence budget in use, the time high-water mark,
// clock-back events, every segment tag's two buffers, the build), and GET
// /ui, one self-contained HTML page (embedded, no external assets) that
// polls /status every second, charts IDs/s and decodes a pasted ID.
//
// It is a plain http.Handler, tied to no web framework, so that every
// door can serve it: New takes what the page shows (the ID service,
// segment mode, a counter of IDs issued, the readiness) as functions read
// per request. Authentication is the door's: /status should need the
// metrics scope wherever /metrics does; /ui holds no data.
//
// /status costs what a /metrics scrape of the same figures does: the
// core's Stats (atomic loads, and the populator's lock for one read of its
// last unit), each segment tag's buffer lock for a few field copies, and
// one ~2 KB JSON document (about 15 allocations). The rate needs no
// goroutine: /status takes a sample at most once a second.
package statuspage
