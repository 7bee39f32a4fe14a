package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/machineid"
)

// Config is the validated configuration of a vesta-go program.
type Config struct {
	// Service is ready for service.New; its Logger is set.
	Service  service.Settings
	Listen   string
	MaxBatch int
	// SegmentMaxRange caps a segment range handed out whole.
	SegmentMaxRange int64
	// CallTimeout bounds every ID and segment call on a server.
	CallTimeout time.Duration
	// MaxConnsPerIP caps a server's TCP connections from one remote IP.
	MaxConnsPerIP int
	// MaxConns caps the connections of a server's port; 0: the default,
	// fitted to the file descriptor limit (internal/server/app.FitConns).
	MaxConns int
	// ShutdownTimeout bounds a server's wait for the calls in flight on
	// SIGINT/SIGTERM.
	ShutdownTimeout time.Duration
	// RPC are server-rpc's TCP limits (GroupRPC).
	RPC RPC
	// AdminListen is where server-rpc serves /metrics, /healthz and
	// /readyz; "" for none (GroupAdmin).
	AdminListen string
	LogLevel    slog.Level
	LogFormat   string
	// File is the config file read, "" if none.
	File string
	// MachineProvider names the provider in force; MachineSource is where
	// the key that gives the machine id was set (machine for property, ips,
	// hostname, machineProvider for etcd), for the status page.
	MachineProvider string
	MachineSource   Source
	// Segment is what the segment keys say; the program makes the store's
	// configuration of it (internal/server/segconfig checks the DSN with the
	// store's parser first, naming the key: Config.KeyError).
	Segment Segment
	// Lease and Etcd are what the lease keys say when MachineProvider is
	// ProviderEtcd, Lease and Postgres when it is ProviderPostgres; zero
	// otherwise. The program makes the lease from them (internal/server/app
	// validates them with the lease library first, naming the config key
	// of a wrong one: Config.KeyError) and puts it in Service.Lease.
	Lease    Lease
	Etcd     EtcdLease
	Postgres PostgresLease
	// Security is the server's TLS, auth file and quotas.
	Security Security

	// sources are where the registered keys were set (KeyError).
	sources map[string]Source
}

// Loader binds the configuration flags to a flag set and loads the
// configuration once the flags are parsed.
type Loader struct {
	fs     *pflag.FlagSet
	d      Defaults
	groups map[Group]bool
	// Stderr receives the logs of the configured logger; nil means os.Stderr.
	Stderr io.Writer
	// TakesArgs says the program takes arguments besides flags (Parse).
	TakesArgs bool
}

// Register adds to fs one flag per key of the groups (GroupFile always;
// none given means ServerGroups) and returns the loader of those keys.
// Parse the command line (Loader.Parse), then call Load.
func Register(fs *pflag.FlagSet, d Defaults, groups ...Group) *Loader {
	if len(groups) == 0 {
		groups = ServerGroups()
	}
	l := &Loader{fs: fs, d: d, groups: map[Group]bool{GroupFile: true}}
	for _, g := range groups {
		l.groups[g] = true
	}
	for _, k := range l.flagKeys() {
		def := l.defaultOf(k)
		usage := k.Usage
		if u, ok := d.Usage[k.Name]; ok {
			usage = u
		}
		for _, name := range []string{k.Flag, k.Alias.Flag} {
			if name == "" {
				continue
			}
			f := fs.VarPF(&keyValue{typ: keyType(k, def)}, name, "", usage)
			f.DefValue = def
			if f.Value.Type() == typeBool { // a bare --flag means true
				f.NoOptDefVal = boolean(true)
			}
			f.Hidden = name != k.Flag // --help names the alias on the key's line
		}
	}
	return l
}

// defaultOf is the default of k in this program, as text: the program's
// (Defaults) for listen and genMethod; "" when there is none or it
// varies by machine.
func (l *Loader) defaultOf(k Key) string {
	switch k.Name {
	case KeyListen:
		return l.d.Listen
	case KeyGenMethod:
		return num(l.d.GenMethod)
	}
	return k.Default
}

// keys are the keys of the registered groups.
func (l *Loader) keys() []Key {
	var ks []Key
	for _, k := range Keys() {
		if l.groups[k.Group] {
			ks = append(ks, k)
		}
	}
	return ks
}

// flagKeys are the keys of the registered groups that take a flag: all
// but the program's FileOnly keys.
func (l *Loader) flagKeys() []Key {
	var ks []Key
	for _, k := range l.keys() {
		if !slices.Contains(l.d.FileOnly, k.Name) {
			ks = append(ks, k)
		}
	}
	return ks
}

// Load reads the file, environment and flags into a validated Config. It
// reads only the registered groups' keys; the fields of the others keep
// their zero values (the libraries' defaults).
//
// A VESTA_* environment variable or a key in the file that is no key is
// an error (UnknownKeyError), and so is a value a key does not allow
// (ValueError, naming where it was set).
func (l *Loader) Load() (Config, error) {
	if err := checkEnv(os.Environ()); err != nil {
		return Config{}, err
	}
	// Flags and variables are read by lookup, viper reads the file: a flag
	// or a variable then never passes through viper's lenient conversions.
	r := reader{fileVals: viper.NewWithOptions(viper.WithCodecRegistry(codecs())), fs: l.fs}
	var c Config
	if file := r.str(KeyConfig, ""); file != "" {
		if err := r.readFile(file); err != nil {
			return Config{}, err
		}
		c.File = file
	}
	has := l.groups
	if has[GroupServer] {
		c.Listen = r.listen(l.d.Listen, l.d.portProperties())
		c.MaxBatch = int(r.int(KeyMaxBatch, "", DefaultMaxBatch, 1, intf.MaxBatch))
		c.SegmentMaxRange = r.int(KeySegmentMaxRange, "", serverdefaults.SegmentMaxRange, 1, intf.MaxRange)
		c.CallTimeout = r.duration(KeyCallTimeout, DefaultCallTimeout, time.Millisecond, 10*time.Minute)
		c.MaxConnsPerIP = int(r.int(KeyMaxConnsPerIP, "", DefaultMaxConnsPerIP, 1, 1_000_000))
		c.MaxConns = int(r.int(KeyMaxConns, "", 0, 0, 1_000_000))
		c.ShutdownTimeout = r.duration(KeyShutdownTimeout, DefaultShutdownTimeout, time.Millisecond, time.Hour)
	}
	if has[GroupRPC] {
		c.RPC = r.rpc()
	}
	c.LogLevel, c.LogFormat = slog.LevelInfo, DefaultLogFormat
	if has[GroupLog] {
		c.LogLevel = r.logLevel()
		c.LogFormat = r.oneOf(KeyLogFormat, DefaultLogFormat, "text", "json")
	}

	s := &c.Service
	if has[GroupService] {
		s.GenMethod = r.int(KeyGenMethod, VestaGenMethod, l.d.GenMethod, 0, intf.MaxGenMethod)
		s.Type = r.idType()
		s.Version = r.int(KeyVersion, "", 0, 0, intf.MaxVersion)
		s.Populator = r.populator()
		s.EpochMillis = r.epoch()
	}
	if has[GroupDataDir] {
		s.DataDir = r.str(KeyDataDir, "")
		s.NoDataDir = r.bool(KeyNoDataDir, "", false)
	}
	if has[GroupService] {
		s.MaxClockBackwardWait = r.duration(KeyMaxClockBackwardWait, serviceDefaults.MaxClockBackwardWait, time.Millisecond, 24*time.Hour)
		s.ResetDataDir = r.bool(KeyResetDataDir, "", false)
		s.MaxBorrow = r.duration(KeyMaxBorrow, 0, 0, service.MaxMaxBorrow)
	}
	if has[GroupSegment] {
		c.Segment = r.segment(s, has[GroupSegmentTags])
	}
	if has[GroupService] {
		c.MachineProvider = r.machine(s, has[GroupEtcd])
		c.MachineSource = r.machineSource(c.MachineProvider)
	}
	if has[GroupSecurity] {
		c.Security = r.security()
	}
	if has[GroupAdmin] {
		c.AdminListen = r.adminListen(c.Listen)
	}
	var lease Lease
	var etcd EtcdLease
	var pg PostgresLease
	if has[GroupEtcd] {
		lease, etcd = r.lease(c.MachineProvider)
		pg = r.postgres(c.MachineProvider)
	}
	if has[GroupService] { // after the values are checked one by one
		r.checkProviderKeys(c.MachineProvider, has[GroupEtcd])
	}
	if has[GroupService] && has[GroupEtcd] {
		r.checkBorrow(*s, lease.TTL, c.MachineProvider)
	}
	if has[GroupDataDir] {
		r.checkDataDirKeys(s.NoDataDir, has[GroupService])
	}
	if r.err != nil {
		return Config{}, r.err
	}
	s.Logger = c.NewLogger(l.Stderr)
	if has[GroupServer] {
		r.warnIneffective(s.Logger)
	}
	switch c.MachineProvider {
	case ProviderEtcd:
		c.Lease, c.Etcd = lease, etcd
	case ProviderPostgres:
		c.Lease, c.Postgres = lease, pg
	}
	c.sources = r.sources(l.keys())
	return c, nil
}

// readFile reads a config file by its extension and refuses unknown keys.
func (r *reader) readFile(file string) error {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	switch ext {
	case "yaml", "yml", "toml", "json", "properties", "props", "prop":
	default:
		return fmt.Errorf("config file %s: unsupported extension %q: use .yaml, .yml, .toml, .json or .properties", file, ext)
	}
	r.fileVals.SetConfigFile(file)
	if err := r.fileVals.ReadInConfig(); err != nil {
		return fmt.Errorf("config file %s: %w", file, err)
	}
	r.file = file
	var unknown []*UnknownKeyError
	for _, k := range r.fileVals.AllKeys() {
		if r.fileVals.InConfig(k) && !knownFileKey(k) {
			unknown = append(unknown, unknownKey(k, r.source(k), fileKeys(), true))
		}
	}
	return joinUnknown(unknown)
}

// listen takes listen, else the first of Vesta's port properties set
// (ports) as ":port".
func (r *reader) listen(def string, ports []string) string {
	const wantAddr = "host:port with port 0..65535, e.g. :8080 or 127.0.0.1:8080"
	const wantPort = "a port 0..65535"
	addr := r.given(KeyListen, "", wantAddr)
	if name := r.setName(ports...); !r.isSet(KeyListen) && name != "" {
		if port := r.given(name, "", wantPort); port != "" {
			if _, err := parsePort(port); err != nil {
				r.fail(name, port, wantPort)
			}
			addr = ":" + port
		}
	}
	if addr == "" {
		addr = def
	}
	if r.err != nil {
		return ""
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = parsePort(port)
	}
	if err != nil {
		r.fail(KeyListen, addr, wantAddr)
	}
	return addr
}

func (r *reader) logLevel() slog.Level {
	var lv slog.Level
	s := r.oneOf(KeyLogLevel, DefaultLogLevel, "debug", "info", "warn", "error")
	if r.err == nil {
		_ = lv.UnmarshalText([]byte(s))
	}
	return lv
}

func (r *reader) idType() intf.IdType {
	const want = "max-peak (0) or min-granularity (1)"
	s := r.given(KeyType, VestaType, want)
	if s == "" || r.err != nil {
		return intf.MaxPeak
	}
	t, err := intf.ParseIdType(s)
	if err != nil {
		r.fail(KeyType, s, want)
	}
	return t
}

// populator takes populator, else Vesta's two boolean switches.
func (r *reader) populator() string {
	valid := service.Populators()
	if r.isSet(KeyPopulator) || r.failEmptyEnv(KeyPopulator, "one of "+strings.Join(valid, ", ")) {
		return r.oneOf(KeyPopulator, serviceDefaults.Populator, valid...)
	}
	switch { // atomic wins over sync, as in Vesta
	case r.bool(VestaAtomic, "", false):
		return service.PopulatorAtomic
	case r.bool(VestaSyncLock, "", false):
		return service.PopulatorSync
	}
	return serviceDefaults.Populator
}

// epoch reads epoch and checks it with the rule service.New applies with
// its Clock (Settings.WithDefaults), against the system clock: the clock
// of the service of a loaded Config (its Clock is nil). A Clock set later
// is checked again by New.
func (r *reader) epoch() int64 {
	ms, name, ok := r.integer(KeyEpoch, "", "an integer: Unix milliseconds, 1..now")
	if !ok {
		return intf.DefaultEpochMillis
	}
	// 0 is a Settings field's "default", but no epoch a key may name.
	var fe *intf.FieldError
	if _, err := (service.Settings{EpochMillis: ms, NoDataDir: true}).WithDefaults(); ms == 0 || errors.As(err, &fe) && fe.Field == "epoch" {
		r.fail(name, ms, fmt.Sprintf("an integer 1..%d (Unix milliseconds, not after now)", time.Now().UnixMilli()))
		return intf.DefaultEpochMillis
	}
	return ms
}

// machine fills the machine id or provider into s and returns the
// provider's name; provider etcd needs the etcd keys (withEtcd).
func (r *reader) machine(s *service.Settings, withEtcd bool) string {
	want := "property, ips, hostname, etcd or postgres"
	if !withEtcd {
		want = "property, ips or hostname (this program reads no etcd keys)"
	}
	provider := r.given(KeyMachineProvider, "", want)
	ips := r.str(KeyIPs, VestaIPs)
	if provider == "" {
		provider = r.defaultProvider()
	}
	switch provider {
	case ProviderProperty:
		s.Machine = r.int(KeyMachine, VestaMachine, 0, 0, intf.MaxMachine)
	case ProviderIPs:
		if ips == "" {
			r.fail(KeyIPs, "", "a comma-separated list of IPv4 addresses (required by machineProvider ips)")
		}
		s.MachineProvider = machineid.IPList{IPs: strings.Split(ips, ",")}
	case ProviderHostname:
		s.MachineProvider = machineid.Hostname{Hostname: r.str(KeyHostname, "")}
	case ProviderEtcd, ProviderPostgres: // the program makes the lease (internal/server/app)
		if !withEtcd {
			r.fail(KeyMachineProvider, provider, want)
		}
	default:
		r.fail(KeyMachineProvider, provider, want)
	}
	return provider
}

// machineSource is where the key that gives the machine id under
// provider was set.
func (r *reader) machineSource(provider string) Source {
	names := map[string][]string{
		ProviderProperty: {KeyMachine, VestaMachine},
		ProviderIPs:      {KeyIPs, VestaIPs},
		ProviderHostname: {KeyHostname},
		ProviderEtcd:     {KeyMachineProvider},
	}[provider]
	return r.source(r.setName(names...))
}

// defaultProvider is the provider when machineProvider is not set:
// property, or ips when ips is set and machine is not, or is set at a
// lower layer (a flag's ips list over the file's machine id). Both at one
// layer contradict each other.
func (r *reader) defaultProvider() string {
	m, ips := r.setName(KeyMachine, VestaMachine), r.setName(KeyIPs, VestaIPs)
	switch {
	case ips == "":
		return ProviderProperty
	case m == "" || r.source(ips).Layer > r.source(m).Layer:
		return ProviderIPs
	}
	if machine := r.int(KeyMachine, VestaMachine, 0, 0, intf.MaxMachine); r.err == nil { // a wrong value first
		r.conflict(ips, m, num(machine),
			"both give the machine id (ips: this host's index in the list); set machineProvider to property or ips")
	}
	return ProviderProperty
}

// NewLogger returns the slog logger the configuration asks for, writing to
// w (os.Stderr when nil).
func (c Config) NewLogger(w io.Writer) *slog.Logger {
	if w == nil {
		w = stderr
	}
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		opts.ReplaceAttr = readableDuration
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// readableDuration writes a duration as the text log does, "15s", rather
// than as the JSON handler does, 15000000000 nanoseconds: what an operator
// reads, and what the duration keys take.
func readableDuration(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// fileKeys are the names a file may hold: every key but config, and
// Vesta's property names.
func fileKeys() []string {
	var names []string
	for _, k := range Keys() {
		if k.Name != KeyConfig {
			names = append(names, k.Name)
		}
		if k.Alias.Name != "" {
			names = append(names, k.Alias.Name)
		}
	}
	return append(names, vestaKeys()...)
}
