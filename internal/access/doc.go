// Package access decides who may call a vesta-go server and how much: the
// clients of an auth file, each known by the SHA-256 of its bearer token,
// with scopes (genid, decode, segment:<tag>, segment:*, metrics) and a
// quota of IDs per second; or, without an auth file, an optional quota per
// remote address. Both servers consult one Guard per call, so REST and RPC
// refuse the same calls for the same reasons.
//
// A Guard holds a Policy, which a reload replaces at once (SetPolicy)
// while calls go on: a client's quota bucket and counters survive the swap
// when its name, rate and burst stay. Tokens are compared as SHA-256
// digests: found through a keyed hash whose key no caller knows, then
// confirmed in constant time; the token itself is never stored, logged or
// quoted in an error. Refusals are counted by reason
// (Stats) and logged at most once per interval, so a flood of bad calls is
// not a flood of log lines.
//
// A quota counts IDs, not requests: a batch of 1,000 costs 1,000. A batch
// larger than the burst is let through once the bucket is full and leaves
// it in debt, so every batch the server allows can be served and the rate
// holds on average.
//
// Package authfile reads the YAML auth file into a Policy. This package
// links only the standard library.
package access
