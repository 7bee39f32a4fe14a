//go:build !stress

package service_test

// stress is off in a plain go test: the multi-million-ID runs are cut to a
// size that still exhausts units for real. Build with -tags stress (as
// scripts/test.sh does) for the full runs.
const stress = false
