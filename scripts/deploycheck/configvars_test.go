package deploycheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// configVars is every configuration variable of the servers: the second
// column of the key tables of docs/configuration.md, which internal/server/config's
// own tests hold equal to config.Keys. Reading the table rather than
// config.Keys keeps this package's tests from linking the configuration
// loader and all it configures (etcd, pgx, SQLite): a link of ~2 s fewer
// in every go test ./....
func configVars(t *testing.T) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	require.NoError(t, err)
	vars := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 5 {
			continue
		}
		if v := strings.Trim(cells[1], "`"); strings.HasPrefix(v, "VESTA_") {
			vars[v] = true
		}
	}
	require.Greater(t, len(vars), 40, "the key tables of docs/configuration.md name every variable")
	return vars
}
