//go:build stress

package service_test

// stress is set by the build tag stress (scripts/test.sh, so CI, uses it):
// the multi-million-ID runs take their full size.
const stress = true
