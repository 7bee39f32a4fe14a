// Package buildinfo holds the version stamped into release binaries.
package buildinfo

import "runtime/debug"

// Version is set at link time by scripts/release.sh:
//
//	-ldflags "-X github.com/vesta-go/vesta/internal/buildinfo.Version=v1.2.3"
var Version = ""

// String returns Version, or the module version Go recorded, or "dev".
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
