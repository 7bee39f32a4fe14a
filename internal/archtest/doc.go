// Package archtest holds no code: its test checks that the package layers
// drawn in docs/architecture.md are the ones `go list` sees, so the map
// cannot drift from the code.
package archtest
