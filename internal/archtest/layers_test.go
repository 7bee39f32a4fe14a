package archtest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/vesta-go/vesta"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Module     *struct{ Path string }
}

// goList is go list on every module of the workspace (tests excluded),
// run once for the tests that read it (about a second of CPU each time).
var goList = sync.OnceValues(func() ([]byte, error) {
	dirs, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}/...").Output()
	if err != nil {
		return nil, err
	}
	args := append([]string{"list", "-json=ImportPath,Imports,Deps"}, strings.Fields(string(dirs))...)
	return exec.Command("go", args...).Output()
})

// listPackages is what go list says of the module's packages.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := goList()
	require.NoError(t, err, "go list")
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		require.NoError(t, dec.Decode(&p))
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// notes are the parenthesised remarks of a row.
var notes = regexp.MustCompile(`\([^)]*\)`)

// layers reads the layer rows of docs/architecture.md's package map: the
// first fenced block after "## Packages", one row per layer from the top,
// names separated by " · " or " → ", parenthesised notes ignored.
func layers(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("../../docs/architecture.md")
	require.NoError(t, err)
	defer f.Close()
	var rows [][]string
	inSection, inBlock := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "## Packages":
			inSection = true
		case inSection && line == "```" && !inBlock:
			inBlock = true
		case inBlock && line == "```":
			return rows
		case inBlock:
			fields := strings.Fields(line)
			require.NotEmpty(t, fields)
			rest := strings.TrimSpace(strings.TrimPrefix(line, " "+fields[0]))
			rest = notes.ReplaceAllString(rest, "")
			var names []string
			for _, part := range strings.FieldsFunc(rest, func(r rune) bool { return r == '·' || r == '→' }) {
				if name := strings.Fields(part); len(name) > 0 {
					names = append(names, name[0])
				}
			}
			rows = append(rows, names)
		}
	}
	t.Fatal("docs/architecture.md: no package map after ## Packages")
	return nil
}

// matches tells whether a name of the map stands for import path p.
func matches(name, p string) bool {
	rel := strings.TrimPrefix(p, module+"/")
	if strings.HasSuffix(name, "/*") {
		return strings.HasPrefix(rel, strings.TrimSuffix(name, "*"))
	}
	return rel == name || strings.HasSuffix(rel, "/"+name)
}

// ignored are helpers below every layer (or outside the product).
func ignored(p string) bool {
	rel := strings.TrimPrefix(p, module+"/")
	for _, prefix := range []string{"scripts/", "internal/buildinfo", "internal/nettest", "service/backend/pgtest",
		"internal/syncbuf", "internal/archtest", "internal/apicount", "internal/doccomment", "service/backend/etcdtest", "internal/tlstest", "internal/maintest", "internal/testbin",
		"internal/leasetest", "internal/stresstest", "internal/benchbase", "internal/segtest",
		"service/backend/stores/generatorsuite", "service/backend/conformance", "service/backend/internal/"} {
		if strings.HasPrefix(rel, prefix) {
			return true
		}
	}
	return path.Base(rel) == "rpctest"
}

// TestPackageMapIsTrue checks that every package of the module is on
// exactly one row of the map and imports only packages on its own row or
// below, and that the packages the map says link no third-party module
// link none.
func TestPackageMapIsTrue(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := listPackages(t)
	rows := layers(t)
	require.GreaterOrEqual(t, len(rows), 4)
	row := map[string]int{}
	for p := range pkgs {
		if ignored(p) {
			continue
		}
		found := -1
		for r, names := range rows {
			for _, n := range names {
				if matches(n, p) {
					assert.Equal(t, -1, found, "%s is on two rows of the map", p)
					found = r
				}
			}
		}
		if assert.NotEqual(t, -1, found, "%s is missing from the package map in docs/architecture.md", p) {
			row[p] = found
		}
	}
	for p, r := range row {
		for _, imp := range pkgs[p].Imports {
			if ri, ok := row[imp]; ok {
				assert.GreaterOrEqual(t, ri, r, "%s (row %d) imports %s from a row above (%d)", p, r, imp, ri)
			}
		}
	}
	for _, light := range []string{"client", "internal/rpcapi", "internal/rpcserver", "intf"} {
		p, ok := pkgs[module+"/"+light]
		require.True(t, ok, light)
		for _, d := range p.Deps {
			first := strings.Split(d, "/")[0]
			if strings.Contains(first, ".") && !strings.HasPrefix(d, module) {
				t.Errorf("%s links the third-party package %s", light, d)
			}
		}
	}
}

// testOnlyModules are linked by the tests of deploy/'s files alone
// (scripts/deploycheck): heavy modules
// (all of Prometheus, the Kubernetes API) that no program of ours may
// carry. (etcd's server, in the test helpers and scripts, links
// k8s.io/utils and sigs.k8s.io/yaml itself.)
var testOnlyModules = []string{"github.com/prometheus/prometheus/", "k8s.io/api/", "k8s.io/apimachinery/"}

// TestTestOnlyModulesStayInTests checks that no package of the module
// (tests excluded) links a test-only module.
func TestTestOnlyModulesStayInTests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := listPackages(t)
	require.Contains(t, pkgs, module+"/server-rest")
	for p, info := range pkgs {
		for _, d := range info.Deps {
			for _, m := range testOnlyModules {
				if strings.HasPrefix(d, m) {
					t.Errorf("%s links %s, a module only deploy/'s tests may use", p, d)
				}
			}
		}
	}
}

// TestTCPServerLinksNoGoPlugin checks that server-rpc's TCP composition
// links no go-plugin: plugin mode's is apart (server-rpc/internal/rpcapp/pluginapp).
func TestTCPServerLinksNoGoPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := listPackages(t)
	for _, p := range []string{"server-rpc/internal/rpcapp", "internal/server/runtime", "internal/server/segopen", "internal/rpcserver"} {
		info, ok := pkgs[module+"/"+p]
		require.True(t, ok, p)
		for _, d := range info.Deps {
			assert.False(t, strings.HasPrefix(d, "github.com/hashicorp/"), "%s links %s", p, d)
		}
	}
}
