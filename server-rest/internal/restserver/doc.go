// Package restserver is the REST door of vesta-go: Vesta-compatible HTTP
// endpoints on labstack/echo that translate requests into calls on one
// intf.IdService (the embedded service of package service).
//
// Endpoints (all GET): /genid (one ID, or a batch with ?count=N), /expid,
// /transtime, /makeid, /segment/{tag} (segment IDs of a tag, one or a batch,
// from segment mode: a segment.Generator), /segment/{tag}/range (a whole
// range of a tag, for client-side ranges) and /segment (the tags),
// /healthz, /readyz, /metrics (Prometheus), /status (the status page's
// JSON) and /ui (the status page). They are described in
// docs/openapi.yaml and docs/rest.md.
//
// A Server listens first and constructs the ID service in the background,
// because service.New may wait up to maxClockBackwardWait for the clock to
// pass the time high-water mark. Until then the ID endpoints answer 503 and
// /readyz says "starting" (segment mode is opened first, so its endpoints
// serve meanwhile). While a leased machine id is not held /readyz says
// "fenced". On shutdown /readyz turns 503, in-flight requests finish, and
// the service is closed so that it stores its high-water mark, then
// segment mode.
//
// Every error is JSON, {"error": "..."}, plus "param" when one query
// parameter is to blame. The server parses every parameter strictly (a
// malformed query or a repeated parameter is refused) and checks the ones
// that are its own (count against maxBatch, a range's size against
// segmentMaxRange); the ID fields are checked by the
// service, whose *intf.FieldError is reported as 400 naming the parameter
// and its range. It does no ID arithmetic of its own.
package restserver
