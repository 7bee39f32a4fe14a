// Package segtest holds test helpers for segment mode: a fake
// service.Clock whose waits end only when the test moves it, a Store
// wrapper that counts allocations and fails on demand, an in-memory store,
// and the day-boundary test every store runs.
package segtest
