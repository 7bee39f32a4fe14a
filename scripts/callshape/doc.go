// Package callshape measures what the shape of a call costs a segment ID
// taken from a loaded range, beside a bare atomic.Int64.Add in the same
// run: the floor for any Generator.NextId that Go does not inline (its
// fast path and the call to its slow path exceed the inliner's budget).
//
//	go test -run '^$' -bench . -count 5 ./scripts/callshape
//
// Rows: Atomic, the bare add; PointerFree, a method whose slow path takes
// only integers (no register argument is stored before the add); CtxTag, the
// same method with NextId's arguments (a context and a tag string), which
// Go 1.26 stores to the stack at entry because the slow path receives them
// — stores a locked add then waits for. docs/benchmarks.md quotes the
// ratios.
package callshape
