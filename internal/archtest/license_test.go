package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository is licensed as docs/openapi.yaml and README.md say:
// LICENSE holds the Apache License 2.0, in full (its terms and the appendix
// that says how to apply it), and scripts/release.sh ships it.
func TestLicense(t *testing.T) {
	b, err := os.ReadFile("../../LICENSE")
	require.NoError(t, err, "LICENSE at the repository's root")
	text := string(b)
	for _, want := range []string{
		"Apache License\n                           Version 2.0, January 2004",
		"TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
		"9. Accepting Warranty or Additional Liability.",
		"END OF TERMS AND CONDITIONS",
		"APPENDIX: How to apply the Apache License to your work.",
	} {
		assert.Contains(t, text, want)
	}
	assert.Len(t, strings.Split(strings.TrimSpace(text), "\n"), 201, "the whole text, no more")

	spec, err := os.ReadFile("../../docs/openapi.yaml")
	require.NoError(t, err)
	assert.Contains(t, string(spec), "  license:\n    name: Apache-2.0\n")
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "[Apache License 2.0](LICENSE)")
	release, err := os.ReadFile("../../scripts/release.sh")
	require.NoError(t, err)
	assert.Contains(t, string(release), "cp LICENSE dist/LICENSE")
}

// Every nested module carries the same LICENSE at its root, so that its
// zip holds it however it is made: from the tag by the module proxy (which
// would otherwise add the repository's) or from the folder.
func TestEveryModuleCarriesTheLicense(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	root, err := os.ReadFile("../../LICENSE")
	require.NoError(t, err)
	dirs, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	require.NoError(t, err)
	for _, dir := range strings.Fields(string(dirs)) {
		b, err := os.ReadFile(filepath.Join(dir, "LICENSE"))
		if assert.NoError(t, err, "%s has no LICENSE", dir) {
			assert.Equal(t, string(root), string(b), "%s/LICENSE differs from the repository's", dir)
		}
	}
}
