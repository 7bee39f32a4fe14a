package config

import (
	"strings"

	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/intf"
)

// Key names, as written in a config file.
const (
	KeyConfig               = "config"
	KeyMachine              = "machine"
	KeyMachineProvider      = "machineProvider"
	KeyIPs                  = "ips"
	KeyHostname             = "hostname"
	KeyGenMethod            = "genMethod"
	KeyType                 = "type"
	KeyVersion              = "version"
	KeyPopulator            = "populator"
	KeyEpoch                = "epoch"
	KeyDataDir              = "dataDir"
	KeyNoDataDir            = "noDataDir"
	KeyMaxClockBackwardWait = "maxClockBackwardWait"
	KeyResetDataDir         = "resetDataDir"
	KeyMaxBorrow            = "maxBorrow"
	KeyListen               = "listen"
	KeyMaxBatch             = "maxBatch"
	KeySegmentMaxRange      = "segmentMaxRange"
	KeyCallTimeout          = "callTimeout"
	KeyMaxConnsPerIP        = "maxConnsPerIP"
	KeyMaxConns             = "maxConns"
	KeyShutdownTimeout      = "shutdownTimeout"
	KeyLogLevel             = "logLevel"
	KeyLogFormat            = "logFormat"

	// Keys of both leases (providers etcd and postgres); their etcd* names
	// of before (etcdPrefix, --etcd-prefix, VESTA_ETCD_PREFIX, ...) are
	// aliases (Key.Alias).
	KeyLeasePrefix      = "leasePrefix"
	KeyLeaseTTL         = "leaseTTL"
	KeyLeaseDialTimeout = "leaseDialTimeout"
	KeyLeaseNodeName    = "leaseNodeName"

	// Keys of the etcd machine-id provider.
	KeyEtcdEndpoints = "etcdEndpoints"
	KeyEtcdUsername  = "etcdUsername"
	KeyEtcdPassword  = "etcdPassword"
	KeyEtcdCACert    = "etcdCACert"
	KeyEtcdCert      = "etcdCert"
	KeyEtcdKey       = "etcdKey"
	KeyMaxClockSkew  = "maxClockSkew"
	KeyMachineRange  = "machineRange"

	// Keys of the postgres machine-id provider (the lease keys tune it
	// too: prefix, TTL, timeout, node name, skew, range).
	KeyMachineDSN   = "machineDSN"
	KeyMachineTable = "machineTable"
	// KeyMachineAllowAsyncFailover accepts a machineDSN naming several
	// servers whose primary replicates asynchronously.
	KeyMachineAllowAsyncFailover = "machineAllowAsyncFailover"
)

// Vesta's property names, accepted in a file so a Vesta user keeps theirs.
const (
	VestaMachine   = "vesta.machine"
	VestaGenMethod = "vesta.genMethod"
	VestaType      = "vesta.type"
	VestaIPs       = "vesta.ips"
	VestaPort      = "vesta.port"
	VestaSyncLock  = "vesta.sync.lock.impl.key"
	VestaAtomic    = "vesta.atomic.impl.key"
	// VestaServicePort is the port of Vesta's central server
	// (vesta-server.properties): server-rpc listens on it when listen is
	// not set; server-rest ignores it.
	VestaServicePort = "vesta.service.port"
	// VestaRegisterCenter is the registry Vesta's central server announced
	// itself to (ZooKeeper, multicast). vesta-go has none: clients are
	// given the servers' addresses. Accepted, with a warning, so that a
	// Vesta user's file is read as it is.
	VestaRegisterCenter = "vesta.service.register.center"
)

// Machine id providers.
const (
	ProviderProperty = "property"
	ProviderIPs      = "ips"
	ProviderHostname = "hostname"
	ProviderEtcd     = "etcd"
	ProviderPostgres = "postgres"
)

// Key describes one configuration key.
type Key struct {
	Name  string // as in a file
	Flag  string // command-line flag, without "--"
	Env   string // environment variable
	Vesta string // Vesta's property name, if any
	// Alias is another name of the key in every layer (file, flag,
	// variable), documented and accepted as the key; the key's own name
	// wins when both are set in one layer.
	Alias Alias
	Group Group // a program reads the key when it registers the group
	// Default is the default as text, written from the constant the loader
	// applies; "" when there is none, or when Varies.
	Default string
	// Varies says the default depends on the program (listen, genMethod:
	// Defaults) or on the machine (dataDir, hostname, ...); Usage or the
	// documentation says how.
	Varies bool
	Usage  string
}

// Alias names a key otherwise: a file key, a flag (without "--") and a
// variable.
type Alias struct{ Name, Flag, Env string }

// Keys lists every key of every group, in documentation order.
func Keys() []Key {
	keys := []Key{
		{Name: KeyConfig, Flag: "config", Env: "VESTA_CONFIG", Group: GroupFile,
			Usage: "config file (.yaml, .yml, .toml, .json or .properties)"},

		{Name: KeyMachine, Flag: "machine", Env: "VESTA_MACHINE", Vesta: VestaMachine, Group: GroupService, Default: num(0), // Settings' zero value
			Usage: "machine id 0..1023 (provider property); every node needs its own"},
		{Name: KeyMachineProvider, Flag: "machine-provider", Env: "VESTA_MACHINE_PROVIDER", Group: GroupService, Default: ProviderProperty,
			Usage: "where the machine id comes from: property, ips, hostname, etcd or postgres (ips when only ips is set)"},
		{Name: KeyIPs, Flag: "ips", Env: "VESTA_IPS", Vesta: VestaIPs, Group: GroupService,
			Usage: "comma-separated site-local IPv4 list; machine id = index of this host's address (provider ips)"},
		{Name: KeyHostname, Flag: "hostname", Env: "VESTA_HOSTNAME", Group: GroupService, Varies: true,
			Usage: "host name for provider hostname, which takes its trailing number (default: the OS host name)"},
		{Name: KeyGenMethod, Flag: "gen-method", Env: "VESTA_GEN_METHOD", Vesta: VestaGenMethod, Group: GroupService, Varies: true,
			Usage: "genMethod field 0..3 (0 embedded, 1 RPC, 2 REST)"},
		{Name: KeyType, Flag: "type", Env: "VESTA_TYPE", Vesta: VestaType, Group: GroupService, Default: intf.MaxPeak.String(),
			Usage: "ID type: max-peak (0) or min-granularity (1)"},
		{Name: KeyVersion, Flag: "id-version", Env: "VESTA_VERSION", Group: GroupService, Default: num(0), // Settings' zero value
			Usage: "version field 0..1"},
		{Name: KeyPopulator, Flag: "populator", Env: "VESTA_POPULATOR", Group: GroupService, Default: serviceDefaults.Populator,
			Usage: "time/sequence strategy: lock, sync, atomic or packed"},
		{Name: KeyEpoch, Flag: "epoch", Env: "VESTA_EPOCH", Group: GroupService, Default: num(intf.DefaultEpochMillis),
			Usage: "time origin in Unix milliseconds, not after now; never change it for a running fleet"},
		{Name: KeyMaxClockBackwardWait, Flag: "max-clock-backward-wait", Env: "VESTA_MAX_CLOCK_BACKWARD_WAIT", Group: GroupService,
			Default: dur(serviceDefaults.MaxClockBackwardWait),
			Usage:   "longest wait at start for the clock to pass the high-water mark; more refuses to start"},
		{Name: KeyMaxBorrow, Flag: "max-borrow", Env: "VESTA_MAX_BORROW", Group: GroupService, Default: dur(0), // Settings' zero value: off
			Usage: "how far a burst may run ahead of the clock when a time unit is used up (0 waits for the clock)"},
		{Name: KeyResetDataDir, Flag: "reset-data-dir", Env: "VESTA_RESET_DATA_DIR", Group: GroupService, Default: boolean(false),
			Usage: "start once on a data dir used before whose high-water mark is lost; only once the clock is surely past its last IDs"},

		{Name: KeyDataDir, Flag: "data-dir", Env: "VESTA_DATA_DIR", Group: GroupDataDir, Varies: true,
			Usage: "directory for the time high-water mark and segments.db (default $XDG_STATE_HOME/vesta-go or ~/.local/state/vesta-go)"},
		{Name: KeyNoDataDir, Flag: "no-data-dir", Env: "VESTA_NO_DATA_DIR", Group: GroupDataDir, Default: boolean(false),
			Usage: "run without a data dir: no high-water mark (a restart with the clock behind can repeat IDs)"},

		{Name: KeyListen, Flag: "listen", Env: "VESTA_LISTEN", Vesta: VestaPort, Group: GroupServer, Varies: true,
			Usage: "listen address host:port"},
		{Name: KeyMaxBatch, Flag: "max-batch", Env: "VESTA_MAX_BATCH", Group: GroupServer, Default: num(DefaultMaxBatch),
			Usage: "largest batch one request may ask for, 1..100000"},
		{Name: KeySegmentMaxRange, Flag: "segment-max-range", Env: "VESTA_SEGMENT_MAX_RANGE", Group: GroupServer, Default: num(serverdefaults.SegmentMaxRange),
			Usage: "largest segment range a client may take whole (GET /segment/{tag}/range, RPC SegmentRange), 1..2147483647"},
		{Name: KeyCallTimeout, Flag: "call-timeout", Env: "VESTA_CALL_TIMEOUT", Group: GroupServer, Default: dur(DefaultCallTimeout),
			Usage: "the longest an ID or segment call may wait on the server (1ms..10m); then it fails with a timeout error"},
		{Name: KeyMaxConnsPerIP, Flag: "max-conns-per-ip", Env: "VESTA_MAX_CONNS_PER_IP", Group: GroupServer, Default: num(DefaultMaxConnsPerIP),
			Usage: "the most TCP connections from one remote IP (1..1000000); more are closed at accept"},
		{Name: KeyMaxConns, Flag: "max-conns", Env: "VESTA_MAX_CONNS", Group: GroupServer, Default: "0",
			Usage: "the most TCP connections the port holds at once (0..1000000; 0: 1024, lowered to fit the file descriptor limit); a newcomer evicts the longest-idle one, or is closed when none is idle"},
		{Name: KeyShutdownTimeout, Flag: "shutdown-timeout", Env: "VESTA_SHUTDOWN_TIMEOUT", Group: GroupServer, Default: dur(DefaultShutdownTimeout),
			Usage: "on SIGINT/SIGTERM, how long to wait for the calls in flight (1ms..1h)"},

		{Name: KeyLogLevel, Flag: "log-level", Env: "VESTA_LOG_LEVEL", Group: GroupLog, Default: DefaultLogLevel,
			Usage: "debug, info, warn or error"},
		{Name: KeyLogFormat, Flag: "log-format", Env: "VESTA_LOG_FORMAT", Group: GroupLog, Default: DefaultLogFormat,
			Usage: "text or json"},
	}
	keys = append(keys, etcdKeys()...)
	keys = append(keys, segmentKeys()...)
	keys = append(keys, adminKeys()...)
	keys = append(keys, rpcKeys()...)
	return append(keys, securityKeys()...)
}

func vestaKeys() []string {
	var ks []string
	for _, k := range Keys() {
		if k.Vesta != "" {
			ks = append(ks, k.Vesta)
		}
	}
	return append(ks, VestaSyncLock, VestaAtomic, VestaServicePort, VestaRegisterCenter)
}

// knownFileKey reports whether a key found in a file (lower-cased by
// viper) is one we read.
func knownFileKey(k string) bool {
	for _, key := range Keys() {
		if (k == strings.ToLower(key.Name) && key.Name != KeyConfig) || (key.Alias.Name != "" && k == strings.ToLower(key.Alias.Name)) {
			return true
		}
	}
	for _, v := range vestaKeys() {
		if k == strings.ToLower(v) {
			return true
		}
	}
	return false
}
