// Package stresstest gates the tests that are too heavy for a plain
// go test ./...: multi-million-ID runs, and end-to-end runs of real
// processes that wait out lease TTLs, kill and restart servers, fail a
// PostgreSQL primary over or drive a browser. They run with the build tag
// stress, which scripts/test.sh (so CI) sets:
//
//	go test -tags stress ./...
//
// A plain go test ./... keeps at least one fast test of each capability
// those tests cover, so that it stays a check of every package (README.md,
// "Test it").
package stresstest

import "testing"

// On reports whether the build tag stress is set: the heavy tests run, and
// the stress runs take their full size.
const On = on

// Only skips t unless the build tag stress is set. why says what makes the
// test heavy; the fast test that covers the same capability in a plain run
// is named in the test's comment.
func Only(t testing.TB, why string) {
	t.Helper()
	if !On {
		t.Skipf("stress only (%s): run it with go test -tags stress, as scripts/test.sh does", why)
	}
}
