// Package segtest holds test helpers for segment mode: a fake clock with
// manual tickers, and a Store wrapper that counts allocations and fails on
// demand.
package segtest
