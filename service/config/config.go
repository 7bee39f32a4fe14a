package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/etcdlease"
	"github.com/vesta-go/vesta/service/segment/stores"
)

// Config is the validated configuration of a vesta-go program.
type Config struct {
	// Service is ready for service.New; its Logger is set.
	Service   service.Settings
	Listen    string
	MaxBatch  int
	LogLevel  slog.Level
	LogFormat string
	// File is the config file read, "" if none.
	File string
	// MachineProvider names the provider in force.
	MachineProvider string
	// Segment configures segment mode, for stores.Open; its Logger is set.
	Segment stores.Config
	// Etcd are the validated options of the etcd lease when
	// MachineProvider is ProviderEtcd (its Logger is set); the program
	// makes the lease (etcdlease.New) and puts it in Service.Lease.
	Etcd etcdlease.Options
}

// Defaults are the per-program defaults.
type Defaults struct {
	Listen    string // e.g. ":8080"
	GenMethod int64  // e.g. intf.GenMethodREST
}

// Loader binds the configuration flags to a flag set and loads the
// configuration once the flags are parsed.
type Loader struct {
	fs *pflag.FlagSet
	d  Defaults
	// Stderr receives the logs of the configured logger; nil means os.Stderr.
	Stderr io.Writer
}

// Register adds one flag per key to fs and returns the loader. Parse fs,
// then call Load.
func Register(fs *pflag.FlagSet, d Defaults) *Loader {
	for _, k := range Keys() {
		def := k.Default
		switch k.Name {
		case KeyListen:
			def = d.Listen
		case KeyGenMethod:
			def = fmt.Sprint(d.GenMethod)
		}
		fs.String(k.Flag, def, k.Usage)
		if def == "false" { // a boolean: a bare --flag means true
			fs.Lookup(k.Flag).NoOptDefVal = "true"
		}
	}
	return &Loader{fs: fs, d: d}
}

// Load reads the file, environment and flags into a validated Config.
func (l *Loader) Load() (Config, error) {
	v := viper.NewWithOptions(viper.WithCodecRegistry(codecs()))
	for _, k := range Keys() {
		if err := v.BindEnv(k.Name, k.Env); err != nil {
			return Config{}, err
		}
		if err := v.BindPFlag(k.Name, l.fs.Lookup(k.Flag)); err != nil {
			return Config{}, err
		}
	}
	r := reader{v: v, fs: l.fs}
	var c Config
	if file := r.str(KeyConfig, ""); file != "" {
		if err := readFile(v, file); err != nil {
			return Config{}, err
		}
		c.File = file
	}
	c.Listen = r.listen(l.d.Listen)
	c.MaxBatch = int(r.int(KeyMaxBatch, "", DefaultMaxBatch, 1, intf.MaxBatch))
	c.LogLevel = r.logLevel()
	c.LogFormat = r.oneOf(KeyLogFormat, "text", "text", "json")

	s := &c.Service
	s.GenMethod = r.int(KeyGenMethod, VestaGenMethod, l.d.GenMethod, 0, intf.MaxGenMethod)
	s.Type = r.idType()
	s.Version = r.int(KeyVersion, "", 0, 0, intf.MaxVersion)
	s.Populator = r.populator()
	s.EpochMillis = r.int(KeyEpoch, "", intf.DefaultEpochMillis, 1, time.Now().UnixMilli())
	s.DataDir = r.str(KeyDataDir, "")
	s.NoDataDir = r.bool(KeyNoDataDir, "", false)
	s.MaxClockBackwardWait = r.duration(KeyMaxClockBackwardWait, service.DefaultMaxClockBackwardWait, time.Millisecond, 24*time.Hour)
	c.Segment = r.segment(s)
	c.MachineProvider = r.machine(s)
	etcdOpts := r.etcd(c.MachineProvider)
	if r.err != nil {
		return Config{}, r.err
	}
	s.Logger = c.NewLogger(l.Stderr)
	c.Segment.Settings.Logger = s.Logger
	if c.MachineProvider == ProviderEtcd {
		etcdOpts.Logger = s.Logger
		if r.checkEtcd(etcdOpts); r.err != nil {
			return Config{}, r.err
		}
		c.Etcd = etcdOpts
	}
	return c, nil
}

// readFile reads a config file by its extension and rejects unknown keys.
func readFile(v *viper.Viper, file string) error {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	switch ext {
	case "yaml", "yml", "toml", "json", "properties", "props", "prop":
	default:
		return fmt.Errorf("config file %s: unsupported extension %q: use .yaml, .yml, .toml, .json or .properties", file, ext)
	}
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		return fmt.Errorf("config file %s: %w", file, err)
	}
	var unknown []string
	for _, k := range v.AllKeys() {
		if v.InConfig(k) && !knownFileKey(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("config file %s: unknown key(s) %s: see docs/configuration.md", file, strings.Join(unknown, ", "))
	}
	return nil
}

// listen takes listen, else Vesta's vesta.port as ":port".
func (r *reader) listen(def string) string {
	const wantAddr = "host:port with port 0..65535, e.g. :8080 or 127.0.0.1:8080"
	const wantPort = "a port 0..65535"
	addr := r.given(KeyListen, "", wantAddr)
	if !r.v.IsSet(KeyListen) {
		if port := r.given(VestaPort, "", wantPort); port != "" {
			if _, err := parsePort(port); err != nil {
				r.fail(VestaPort, port, wantPort)
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
	s := r.oneOf(KeyLogLevel, "info", "debug", "info", "warn", "error")
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
	if r.v.IsSet(KeyPopulator) || r.failEmptyEnv(KeyPopulator, "one of "+strings.Join(valid, ", ")) {
		return r.oneOf(KeyPopulator, service.DefaultPopulator, valid...)
	}
	switch {
	case r.bool(VestaAtomic, "", false):
		return service.PopulatorAtomic
	case r.bool(VestaSyncLock, "", false):
		return service.PopulatorSync
	}
	return service.DefaultPopulator
}

// machine fills the machine id or provider into s and returns the
// provider's name.
func (r *reader) machine(s *service.Settings) string {
	provider := r.given(KeyMachineProvider, "", "property, ips, hostname or etcd")
	ips := r.str(KeyIPs, VestaIPs)
	if provider == "" {
		provider = ProviderProperty
		if ips != "" && !r.v.IsSet(KeyMachine) && !r.v.IsSet(VestaMachine) {
			provider = ProviderIPs
		}
	}
	switch provider {
	case ProviderProperty:
		s.Machine = r.int(KeyMachine, VestaMachine, 0, 0, intf.MaxMachine)
	case ProviderIPs:
		if ips == "" {
			r.fail(KeyIPs, "", "a comma-separated list of IPv4 addresses (required by machineProvider ips)")
		}
		s.MachineProvider = service.IPListMachine{IPs: strings.Split(ips, ",")}
	case ProviderHostname:
		s.MachineProvider = service.HostnameMachine{Hostname: r.str(KeyHostname, "")}
	case ProviderEtcd: // the lease is made once the logger is
	default:
		r.fail(KeyMachineProvider, provider, "property, ips, hostname or etcd")
	}
	return provider
}

// etcd reads the etcd keys, which are validated whatever the provider;
// provider etcd requires endpoints.
func (r *reader) etcd(provider string) etcdlease.Options {
	o := etcdlease.Options{
		Prefix:       r.given(KeyEtcdPrefix, "", "a key prefix such as /vesta"),
		TTL:          r.duration(KeyEtcdLeaseTTL, etcdlease.DefaultTTL, etcdlease.MinTTL, etcdlease.MaxTTL),
		DialTimeout:  r.duration(KeyEtcdDialTimeout, etcdlease.DefaultDialTimeout, etcdlease.MinDialTimeout, etcdlease.MaxDialTimeout),
		Username:     r.str(KeyEtcdUsername, ""),
		Password:     r.str(KeyEtcdPassword, ""),
		CACertFile:   r.str(KeyEtcdCACert, ""),
		CertFile:     r.str(KeyEtcdCert, ""),
		KeyFile:      r.str(KeyEtcdKey, ""),
		NodeName:     r.str(KeyEtcdNodeName, ""),
		MaxClockSkew: r.duration(KeyMaxClockSkew, etcdlease.DefaultMaxClockSkew, etcdlease.MinMaxClockSkew, etcdlease.MaxMaxClockSkew),
	}
	for _, ep := range strings.Split(r.str(KeyEtcdEndpoints, ""), ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			o.Endpoints = append(o.Endpoints, ep)
		}
	}
	if provider == ProviderEtcd && len(o.Endpoints) == 0 {
		r.fail(KeyEtcdEndpoints, "", "a comma-separated list of etcd endpoints (required by machineProvider etcd)")
	}
	return o
}

// etcdOptionKeys maps an etcdlease option to its config key.
var etcdOptionKeys = map[string]string{
	"Endpoints": KeyEtcdEndpoints, "Prefix": KeyEtcdPrefix, "TTL": KeyEtcdLeaseTTL,
	"DialTimeout": KeyEtcdDialTimeout, "Username": KeyEtcdUsername, "Password": KeyEtcdPassword,
	"CACertFile": KeyEtcdCACert, "CertFile": KeyEtcdCert, "KeyFile": KeyEtcdKey,
	"NodeName": KeyEtcdNodeName, "MaxClockSkew": KeyMaxClockSkew,
}

// checkEtcd validates the options of provider etcd; a wrong option fails
// naming its config key.
func (r *reader) checkEtcd(o etcdlease.Options) {
	err := o.Validate()
	var oe *etcdlease.OptionError
	switch {
	case errors.As(err, &oe):
		want := oe.Want
		if oe.Err != nil {
			want += " (" + oe.Err.Error() + ")"
		}
		r.fail(etcdOptionKeys[oe.Option], oe.Value, want)
	case err != nil:
		r.err = err
	}
}

// NewLogger returns the slog logger the configuration asks for, writing to
// w (os.Stderr when nil).
func (c Config) NewLogger(w io.Writer) *slog.Logger {
	if w == nil {
		w = stderr
	}
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
