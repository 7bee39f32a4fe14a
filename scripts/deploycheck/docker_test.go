package deploycheck

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/stresstest"
)

// stage is one stage of the Dockerfile: its base and its instructions
// (continuation lines joined), by keyword.
type stage struct {
	name, from string
	ins        []instruction
}

type instruction struct{ keyword, args string }

func parseDockerfile(t *testing.T) []stage {
	t.Helper()
	raw, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	var stages []stage
	var cur strings.Builder
	from := regexp.MustCompile(`^(\S+)(?:\s+AS\s+(\S+))?$`)
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		kw, args, _ := strings.Cut(line, " ")
		kw, args = strings.ToUpper(kw), strings.TrimSpace(args)
		if kw == "FROM" {
			m := from.FindStringSubmatch(args)
			require.NotNil(t, m, "FROM %s", args)
			stages = append(stages, stage{name: m[2], from: m[1]})
			return
		}
		if len(stages) == 0 {
			require.Equal(t, "ARG", kw, "only ARG before the first FROM")
			return
		}
		s := &stages[len(stages)-1]
		s.ins = append(s.ins, instruction{kw, args})
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if l, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(l + " ")
			continue
		}
		cur.WriteString(line)
		flush()
	}
	flush()
	return stages
}

// chain returns the instructions of stage name and of the stages it
// builds on, the base's first.
func chain(t *testing.T, stages []stage, name string) []instruction {
	t.Helper()
	for _, s := range stages {
		if s.name == name {
			return append(chainOrNil(t, stages, s.from), s.ins...)
		}
	}
	t.Fatalf("no stage %s", name)
	return nil
}

func chainOrNil(t *testing.T, stages []stage, name string) []instruction {
	for _, s := range stages {
		if s.name == name {
			return chain(t, stages, name)
		}
	}
	return nil // an image, not a stage
}

func all(ins []instruction, kw string) []string {
	var out []string
	for _, i := range ins {
		if i.keyword == kw {
			out = append(out, i.args)
		}
	}
	return out
}

// The images run as a non-root user, keep their data in the volume
// VESTA_DATA_DIR names, check their health with vesta-probe on the port
// they expose, and start their server; a plain docker build makes
// server-rest.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t)
	require.NotEmpty(t, stages)
	assert.Equal(t, "server-rest", stages[len(stages)-1].name, "the last stage is the default target")
	known := configVars(t)
	for server, health := range map[string]string{"server-rest": "VESTA_LISTEN", "server-rpc": "VESTA_ADMIN_LISTEN"} {
		ins := chain(t, stages, server)
		users := all(ins, "USER")
		require.NotEmpty(t, users, server)
		uid, _, _ := strings.Cut(users[len(users)-1], ":")
		assert.NotContains(t, []string{"0", "root", ""}, uid, "%s runs as a non-root user", server)

		env := map[string]string{}
		for _, e := range all(ins, "ENV") {
			k, v, ok := strings.Cut(e, "=")
			require.True(t, ok, "ENV %s: want KEY=value", e)
			assert.True(t, known[k], "%s: ENV %s is no configuration variable", server, k)
			env[k] = v
		}
		require.NotEmpty(t, env["VESTA_DATA_DIR"], server)
		assert.Contains(t, all(ins, "VOLUME"), `["`+env["VESTA_DATA_DIR"]+`"]`, "%s: the data dir is the volume", server)

		var entry []string
		require.NoError(t, json.Unmarshal([]byte(all(ins, "ENTRYPOINT")[0]), &entry), server)
		assert.Equal(t, []string{"/usr/local/bin/" + server}, entry)

		hc := all(ins, "HEALTHCHECK")
		require.Len(t, hc, 1, server)
		_, cmd, ok := strings.Cut(hc[0], "CMD ")
		require.True(t, ok, hc[0])
		var probe []string
		require.NoError(t, json.Unmarshal([]byte(cmd), &probe), "%s: HEALTHCHECK CMD in exec form (no shell in the image)", server)
		require.Len(t, probe, 2, server)
		assert.Equal(t, "/usr/local/bin/vesta-probe", probe[0])
		port := ":8080" // server-rest's default listen
		if p, ok := env[health]; ok {
			port = p
		}
		assert.Equal(t, "http://127.0.0.1"+port+"/healthz", probe[1], "%s: the probe asks the HTTP port", server)
		assert.Contains(t, strings.Fields(strings.Join(all(ins, "EXPOSE"), " ")), strings.TrimPrefix(port, ":"), server)
	}
}

// The build stage's go build makes static binaries (CGO_ENABLED=0) of
// main packages, which run on distroless/static: without cgo every
// package they link resolves (go list), and a binary built so has no ELF
// interpreter and needs no shared library (vesta-probe, built here the
// same way; building the servers too would take minutes of CPU and prove
// nothing more: without cgo the Go linker links statically).
func TestDockerfileBuildsStaticBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds vesta-probe")
	}
	t.Parallel()
	var build string
	for _, s := range parseDockerfile(t) {
		for _, r := range all(s.ins, "RUN") {
			if strings.Contains(r, "go build") {
				build = r
			}
		}
	}
	require.NotEmpty(t, build, "a RUN go build")
	require.Contains(t, build, "CGO_ENABLED=0")
	m := regexp.MustCompile(`-o /out/ ((?:\./\S+ ?)+)`).FindStringSubmatch(build)
	require.NotNil(t, m, build)
	pkgs := strings.Fields(m[1])
	assert.Subset(t, pkgs, []string{"./server-rest", "./server-rpc", "./cmd/vesta-probe"})
	goCmd := func(args ...string) *exec.Cmd {
		cmd := exec.Command("go", args...)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		return cmd
	}
	list, err := goCmd(append([]string{"list", "-e", "-deps", "-f", "{{if .Incomplete}}INCOMPLETE {{.ImportPath}}{{end}}{{if .CgoFiles}}CGO {{.ImportPath}}{{end}}"}, pkgs...)...).CombinedOutput()
	require.NoError(t, err, "%s", list)
	assert.Empty(t, strings.TrimSpace(string(list)), "packages that need cgo or do not resolve without it")
	for _, p := range pkgs {
		name, err := goCmd("list", "-f", "{{.Name}}", p).Output()
		require.NoError(t, err, p)
		assert.Equal(t, "main", strings.TrimSpace(string(name)), "%s is a command", p)
	}

	// The build itself (2-3 s of CPU for a link without cgo) is stress
	// only; a plain run keeps the checks above.
	t.Run("vesta-probe links statically", func(t *testing.T) {
		stresstest.Only(t, "builds vesta-probe without cgo to read its ELF headers")
		out := filepath.Join(t.TempDir(), "vesta-probe")
		msg, err := goCmd("build", "-trimpath", "-o", out, "./cmd/vesta-probe").CombinedOutput()
		require.NoError(t, err, "%s", msg)
		f, err := elf.Open(out)
		require.NoError(t, err)
		defer f.Close()
		for _, prog := range f.Progs {
			assert.NotEqual(t, elf.PT_INTERP, prog.Type, "vesta-probe is dynamically linked")
		}
		libs, err := f.ImportedLibraries()
		require.NoError(t, err)
		assert.Empty(t, libs, "vesta-probe needs shared libraries")
	})
}
