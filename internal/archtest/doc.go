// Package archtest holds no code: its tests check that the package layers
// drawn in docs/architecture.md are the ones `go list` sees, so the map
// cannot drift from the code, and that what must stay light does
// (internal/server/config links no lease client).
package archtest
