package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runBinary runs server-rest to its end with args and the environment
// without any VESTA_* variable but env, and returns its exit code, stdout
// and stderr.
func runBinary(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "VESTA_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// --help is on stdout: what the program is, typed flags, the variables.
func TestHelpThroughTheBinary(t *testing.T) {
	code, out, errOut := runBinary(t, nil, "--help")
	assert.Equal(t, 0, code)
	assert.Empty(t, errOut)
	assert.True(t, strings.HasPrefix(out, "server-rest: serves vesta-go's unique 64-bit IDs over HTTP"), out)
	for _, s := range []string{"\n  --machine int ", "\n  --no-data-dir ", "\n  --lease-ttl duration ", "[VESTA_MACHINE, key machine]",
		"Precedence, highest first", "docs/configuration.md"} {
		assert.Contains(t, out, s)
	}
	assert.NotContains(t, out, `string[="true"]`)
}

// Start-up refuses a wrong configuration with exit code 2 and one line
// that says what is wrong and where it was set; it serves nothing and
// leaves nothing in the data dir.
func TestConfigErrorsThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "vesta.yaml")
	require.NoError(t, os.WriteFile(file, []byte("listen: 127.0.0.1:0\nmachine: 2000\n"), 0o600))
	data := filepath.Join(dir, "data")
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"VESTA_DATA_DRI=" + data}, nil,
			"server-rest: environment variable VESTA_DATA_DRI is no vesta-go variable: did you mean VESTA_DATA_DIR? " +
				"Unset it; every VESTA_* variable is in docs/configuration.md\n"},
		{[]string{"VESTA_MACHINE=2000"}, nil,
			`server-rest: invalid argument: config key machine: "2000" from environment variable VESTA_MACHINE: want an integer 0..1023` + "\n"},
		{nil, []string{"--config", file},
			`server-rest: invalid argument: config key machine: "2000" from file ` + file + ` line 2: want an integer 0..1023` + "\n"},
		{nil, []string{"--no-data-dir", "maybe"},
			`server-rest: invalid argument: config key noDataDir: "maybe" from flag --no-data-dir: want true or false (also on/off, yes/no, 1/0)` + "\n"},
		{nil, []string{"--no-data-dir=maybe"},
			`server-rest: invalid argument: config key noDataDir: "maybe" from flag --no-data-dir: want true or false (also on/off, yes/no, 1/0)` + "\n"},
		{nil, []string{"--machine"}, "server-rest: flag needs an argument: --machine (see --help)\n"},
		{nil, []string{"--machine", "5", "--machine-provider", "hostname"},
			`server-rest: invalid argument: config key machine ("5" from flag --machine) contradicts machineProvider ("hostname" from flag --machine-provider): ` +
				`machineProvider hostname takes the machine id from the host name's trailing number, so machine would be ignored; remove one of them` + "\n"},
		{nil, []string{"--segment-store", "postgres", "--segment-dsn", "postgres://ids:s3cret-on-argv@127.0.0.1:1/ids"},
			`server-rest: invalid argument: config key segmentDSN: "(not shown: it may hold a password)" from flag --segment-dsn: ` +
				`want no password on the command line, which every user of this host can read (ps): give it in the environment variable VESTA_SEGMENT_DSN ` +
				`or the config file's key segmentDSN (or a DSN without the password, with PGPASSWORD or a .pgpass file)` + "\n"},
		{nil, []string{"--segment-store", "postgres", "--segment-dsn", "host=127.0.0.1 sslkey=k.pem sslpassword=s3cret-on-argv"},
			`server-rest: invalid argument: config key segmentDSN: "(not shown: it may hold a password)" from flag --segment-dsn: ` +
				`want no password on the command line, which every user of this host can read (ps): give it in the environment variable VESTA_SEGMENT_DSN ` +
				`or the config file's key segmentDSN (or a DSN without the password, with PGPASSWORD or a .pgpass file)` + "\n"},
		{nil, []string{"--machine-provider", "etcd", "--etcd-endpoints", "https://ids:s3cret-on-argv@127.0.0.1:2379"},
			`server-rest: invalid argument: config key etcdEndpoints: "https://ids:xxxxx@127.0.0.1:2379" from flag --etcd-endpoints: ` +
				`want an endpoint without user info: give the credentials as Username and Password (etcdUsername, etcdPassword)` + "\n"},
	} {
		code, out, errOut := runBinary(t, append(tc.env, "VESTA_DATA_DIR="+data), tc.args...)
		assert.Equal(t, 2, code, "%v %v: %s", tc.env, tc.args, errOut)
		assert.Empty(t, out)
		assert.Equal(t, tc.want, errOut, "%v %v", tc.env, tc.args)
		assert.NoDirExists(t, data, "nothing started")
	}
}
