package config_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// fuzzExts are the config file formats, by extension.
var fuzzExts = []string{"yaml", "toml", "json", "properties"}

// fuzzLoad loads a config file of the given extension and content through
// the one loader, as a program's --config does. It fails the test when
// Load takes longer than 10 s.
func fuzzLoad(t *testing.T, ext string, content []byte) (config.Config, string, error) {
	t.Helper()
	for _, k := range config.Keys() { // the file alone, not the environment
		if _, set := os.LookupEnv(k.Env); set {
			t.Skipf("%s is set", k.Env)
		}
	}
	path := filepath.Join(t.TempDir(), "vesta."+ext)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("fuzz", pflag.ContinueOnError)
	l := config.Register(fs, config.Defaults{Listen: ":8080", GenMethod: intf.GenMethodREST})
	l.Stderr = io.Discard
	if err := fs.Parse([]string{"--config", path}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		c   config.Config
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := l.Load()
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, path, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("Load of a .%s file hangs; content %q", ext, content)
		return config.Config{}, "", nil
	}
}

// checkValid fails unless every field of c is in the range its key allows.
func checkValid(t *testing.T, c config.Config, path string, content []byte) {
	t.Helper()
	s := c.Service
	bad := func(what string, v any) {
		t.Helper()
		t.Fatalf("Load accepted %s %v from %q", what, v, content)
	}
	if c.File != path {
		bad("File", c.File)
	}
	if c.MachineProvider == config.ProviderProperty && (s.Machine < 0 || s.Machine > intf.MaxMachine) {
		bad("machine", s.Machine)
	}
	if !slices.Contains([]string{config.ProviderProperty, config.ProviderIPs, config.ProviderHostname, config.ProviderEtcd}, c.MachineProvider) {
		bad("machineProvider", c.MachineProvider)
	}
	if c.MachineProvider == config.ProviderEtcd && len(c.Etcd.Endpoints) == 0 {
		bad("etcd without endpoints", c.Etcd)
	}
	if s.GenMethod < 0 || s.GenMethod > intf.MaxGenMethod {
		bad("genMethod", s.GenMethod)
	}
	if s.Type != intf.MaxPeak && s.Type != intf.MinGranularity {
		bad("type", s.Type)
	}
	if s.Version < 0 || s.Version > intf.MaxVersion {
		bad("version", s.Version)
	}
	if !slices.Contains(service.Populators(), s.Populator) {
		bad("populator", s.Populator)
	}
	if s.EpochMillis < 1 || s.EpochMillis > time.Now().UnixMilli() {
		bad("epoch", s.EpochMillis)
	}
	if s.MaxClockBackwardWait < time.Millisecond || s.MaxClockBackwardWait > 24*time.Hour {
		bad("maxClockBackwardWait", s.MaxClockBackwardWait)
	}
	if c.MaxBatch < 1 || c.MaxBatch > intf.MaxBatch {
		bad("maxBatch", c.MaxBatch)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", c.Listen)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("logFormat", c.LogFormat)
	}
	if s.Logger == nil {
		bad("a nil logger", nil)
	}
}

// FuzzLoadFile loads any content as a .yaml, .toml, .json or .properties
// config file and checks that Load never panics or hangs and returns
// either an error that names the file or the config key at fault, or a
// Config whose every field is in range.
func FuzzLoadFile(f *testing.F) {
	for _, s := range []struct {
		ext     uint8
		content string
	}{
		{0, "machine: 1\ngenMethod: 3\ntype: min-granularity\npopulator: atomic\n"},
		{0, "machine: 1024\n"},
		{0, "machine: [1, 2]\n"},
		{0, "machine: 1.5\n"},
		{0, "machine: 1e300\n"},
		{0, "vesta:\n  machine: 7\n  port: 8081\n"},
		{0, "a: &a [*a]\n"},
		{0, "machineProvider: etcd\netcdEndpoints: 127.0.0.1:2379\netcdLeaseTTL: 1s\n"},
		{0, "maxClockBackwardWait: 25h\n"},
		{0, "listen: nope\n"},
		{0, "segmentStore: postgres\nsegmentDSN: ':::'\n"},
		{0, "{"},
		{0, "\t- x"},
		{1, "machine = 5\ntype = 1\nmaxBatch = 100000\n"},
		{1, "[vesta]\nmachine = \"7\"\n"},
		{1, "machine = \n"},
		{1, "epoch = 9223372036854775807\n"},
		{2, `{"machine": 3, "genMethod": 0, "logLevel": "debug"}`},
		{2, `{"machine": -1}`},
		{2, `{"machine": "abc"}`},
		{2, `{"unknownKey": true}`},
		{2, `[1,2,3]`},
		{2, `{"vesta": {"machine": 1}, "vesta.machine": 2}`},
		{3, "vesta.machine=78\nvesta.genMethod=2\nvesta.type=0\n"},
		{3, "vesta.machine=78\nvesta.machine.x=1\n"},
		{3, "machine = 5\\\n0\n"},
		{3, "machine: \\u00\n"},
		{3, "vesta.atomic.impl.key=true\n"},
		{3, "vesta.sync.lock.impl.key=maybe\n"},
		{3, "ips=10.0.0.1,10.0.0.2\n"},
		{3, "=\n:\n \\\n"},
		{3, "a..b=1\n"},
	} {
		f.Add(s.ext, []byte(s.content))
	}
	f.Fuzz(func(t *testing.T, ext uint8, content []byte) {
		for _, sys := range []string{"/dev", "/proc", "/sys"} {
			if bytes.Contains(content, []byte(sys)) {
				return // a certificate file there is read by Load: not the loader's parsing
			}
		}
		e := fuzzExts[int(ext)%len(fuzzExts)]
		c, path, err := fuzzLoad(t, e, content)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, path) && !strings.Contains(msg, "config key ") {
				t.Fatalf("Load of %q (.%s): the error names neither the file nor a key: %v", content, e, err)
			}
			checkErrorSource(t, err, path, content)
			return
		}
		checkValid(t, c, path, content)
	})
}

// checkErrorSource fails unless an error about a key of the file names
// the file and the key's line.
func checkErrorSource(t *testing.T, err error, path string, content []byte) {
	t.Helper()
	var src config.Source
	var ve *config.ValueError
	var ue *config.UnknownKeyError
	var ce *config.ConflictError
	switch {
	case errors.As(err, &ve):
		src = ve.Source
	case errors.As(err, &ue):
		src = ue.Source
	case errors.As(err, &ce):
		src = ce.Source
	default:
		return
	}
	if src.Layer == config.LayerFile && (src.Name != path || src.Line < 1) {
		t.Fatalf("Load of %q: the error's source is %+v, want the file and a line: %v", content, src, err)
	}
}

// FuzzConfigRoundTrip writes the same settings in each of the four
// formats, and checks that Load gives back exactly those values when they
// are in range and otherwise refuses them naming the first wrong key.
func FuzzConfigRoundTrip(f *testing.F) {
	f.Add(uint8(0), int64(1), int64(3), int64(0), int64(1), int64(10_000), uint8(0), int64(5000))
	f.Add(uint8(1), int64(1023), int64(0), int64(1), int64(0), int64(100_000), uint8(1), int64(1))
	f.Add(uint8(2), int64(1024), int64(0), int64(0), int64(0), int64(1), uint8(2), int64(86_400_000))
	f.Add(uint8(3), int64(0), int64(4), int64(2), int64(2), int64(0), uint8(3), int64(0))
	f.Add(uint8(3), int64(-1), int64(-1), int64(-1), int64(-1), int64(100_001), uint8(4), int64(-1))
	f.Fuzz(func(t *testing.T, format uint8, machine, genMethod, typ, version, maxBatch int64, pop uint8, waitMs int64) {
		pops := service.Populators()
		populator := pops[int(pop)%len(pops)]
		wait := time.Duration(waitMs) * time.Millisecond
		if waitMs > int64(1<<62/time.Millisecond) || waitMs < -int64(1<<62/time.Millisecond) {
			wait = time.Duration(waitMs) // keep it a valid Duration
		}
		vals := []struct {
			key string
			v   any
		}{
			{"machine", machine}, {"genMethod", genMethod}, {"type", typ}, {"version", version},
			{"maxBatch", maxBatch}, {"populator", populator}, {"maxClockBackwardWait", wait.String()},
		}
		e := fuzzExts[int(format)%len(fuzzExts)]
		var b strings.Builder
		for i, kv := range vals {
			str, isStr := kv.v.(string)
			switch e {
			case "yaml":
				fmt.Fprintf(&b, "%s: %v\n", kv.key, kv.v)
			case "toml":
				if isStr {
					fmt.Fprintf(&b, "%s = %q\n", kv.key, str)
				} else {
					fmt.Fprintf(&b, "%s = %v\n", kv.key, kv.v)
				}
			case "json":
				if i == 0 {
					b.WriteString("{")
				} else {
					b.WriteString(", ")
				}
				if isStr {
					fmt.Fprintf(&b, "%q: %q", kv.key, str)
				} else {
					fmt.Fprintf(&b, "%q: %v", kv.key, kv.v)
				}
				if i == len(vals)-1 {
					b.WriteString("}")
				}
			case "properties":
				fmt.Fprintf(&b, "%s=%v\n", kv.key, kv.v)
			}
		}
		content := []byte(b.String())
		c, path, err := fuzzLoad(t, e, content)

		// The first key out of range, in the order Load reads them.
		inRange := map[string]bool{
			"maxBatch":             maxBatch >= 1 && maxBatch <= intf.MaxBatch,
			"genMethod":            genMethod >= 0 && genMethod <= intf.MaxGenMethod,
			"type":                 typ == 0 || typ == 1,
			"version":              version >= 0 && version <= intf.MaxVersion,
			"maxClockBackwardWait": wait >= time.Millisecond && wait <= 24*time.Hour,
			"machine":              machine >= 0 && machine <= intf.MaxMachine,
		}
		var wrong []string
		for _, k := range []string{"maxBatch", "genMethod", "type", "version", "maxClockBackwardWait", "machine"} {
			if !inRange[k] {
				wrong = append(wrong, k)
			}
		}
		if len(wrong) > 0 {
			if err == nil {
				t.Fatalf("Load of %q accepted the out-of-range %v", content, wrong)
			}
			if !strings.Contains(err.Error(), "config key "+wrong[0]+":") {
				t.Fatalf("Load of %q: %v; want the error to name %s", content, err, wrong[0])
			}
			return
		}
		if err != nil {
			t.Fatalf("Load of %q: %v", content, err)
		}
		checkValid(t, c, path, content)
		s := c.Service
		got := []any{s.Machine, s.GenMethod, int64(s.Type), s.Version, int64(c.MaxBatch), s.Populator, s.MaxClockBackwardWait}
		want := []any{machine, genMethod, typ, version, maxBatch, populator, wait}
		if !slices.Equal(got, want) {
			t.Fatalf("Load of %q = %v, want %v", content, got, want)
		}
	})
}
