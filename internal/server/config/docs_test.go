package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docRow is one row of a key table of docs/configuration.md.
type docRow struct {
	group                   Group // of the section the row is in
	env, flag, def, meaning string
}

// docRows reads the key tables of docs/configuration.md, by key name.
func docRows(t *testing.T) map[string]docRow {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/configuration.md")
	require.NoError(t, err)
	rows := map[string]docRow{}
	var group Group
	for _, line := range strings.Split(string(doc), "\n") {
		if g, ok := strings.CutPrefix(line, "### Group `"); ok {
			group = Group(g[:strings.Index(g, "`")])
			continue
		}
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 5 {
			continue
		}
		name := strings.Trim(strings.TrimPrefix(cells[0], "| "), "`")
		require.NotContains(t, rows, name, "key %s has one row", name)
		rows[name] = docRow{group, strings.Trim(cells[1], "`"), strings.Trim(cells[2], "`"), cells[3], cells[4]}
	}
	return rows
}

func TestDocsListEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/configuration.md")
	require.NoError(t, err)
	for _, k := range Keys() {
		assert.Contains(t, string(doc), "`"+k.Name+"`", "key %s documented", k.Name)
		assert.Contains(t, string(doc), "`"+k.Env+"`", "env %s documented", k.Env)
		assert.Contains(t, string(doc), "`--"+k.Flag+"`", "flag %s documented", k.Flag)
	}
}

// Every key has one row, in its group's section, that shows its env, flag
// and default. The rule for the default cell: a fixed default is the
// value in code, possibly followed by " (when another applies)"; a
// default that varies by program or machine is prose (not "none"); no
// default is "none".
func TestDocsShowEveryKeysDefault(t *testing.T) {
	rows := docRows(t)
	for _, k := range Keys() {
		row, ok := rows[k.Name]
		if !assert.True(t, ok, "key %s has a row", k.Name) {
			continue
		}
		delete(rows, k.Name)
		assert.Equal(t, k.Group, row.group, "key %s is in its group's section", k.Name)
		assert.Equal(t, k.Env, row.env, "key %s", k.Name)
		assert.Equal(t, "--"+k.Flag, row.flag, "key %s", k.Name)
		switch {
		case k.Default != "":
			code := "`" + k.Default + "`"
			if row.def != code {
				assert.True(t, strings.HasPrefix(row.def, code+" (") && strings.HasSuffix(row.def, ")"),
					"key %s: default cell %q: want %s, or %s (when another applies)", k.Name, row.def, code, code)
			}
		case k.Varies:
			assert.NotContains(t, []string{"", "none"}, row.def, "key %s: its default varies: say how", k.Name)
		default:
			assert.Equal(t, "none", row.def, "key %s has no default", k.Name)
		}
	}
	assert.Empty(t, rows, "rows of keys that do not exist")
}

// The example errors of docs/configuration.md are the loader's own.
func TestDocsErrorExamples(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/configuration.md")
	require.NoError(t, err)
	text := string(doc)
	example := func(t *testing.T, err error, file, docFile string) {
		t.Helper()
		require.Error(t, err)
		msg := "server-rest: " + err.Error()
		if file != "" {
			msg = strings.ReplaceAll(msg, file, docFile)
		}
		assert.Contains(t, text, "    "+msg+"\n")
	}
	_, err = load(t, "--machine", "2000")
	example(t, err, "", "")
	_, err = load(t, "--machine-provider", "ips")
	example(t, err, "", "")
	props := writeFile(t, "vesta.properties", "# Vesta's file\nvesta.genMethod=2\nvesta.type=0\nvesta.machine=2000\n")
	_, err = load(t, "--config", props)
	example(t, err, props, "/etc/vesta.properties")
	yaml := writeFile(t, "vesta.yaml", "machine: 1\nmachnie: 2\n")
	_, err = load(t, "--config", yaml)
	example(t, err, yaml, "vesta.yaml")
	_, err = load(t, "--machine", "5", "--machine-provider", "hostname")
	example(t, err, "", "")
	t.Run("environment", func(t *testing.T) {
		t.Setenv("VESTA_MACHINE", "2000")
		_, err := load(t)
		example(t, err, "", "")
	})
	t.Run("unknown variable", func(t *testing.T) {
		t.Setenv("VESTA_DATA_DRI", "/var/lib/vesta")
		_, err := load(t)
		example(t, err, "", "")
	})
}
