package config

import (
	"strings"
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
	KeyListen               = "listen"
	KeyMaxBatch             = "maxBatch"
	KeyLogLevel             = "logLevel"
	KeyLogFormat            = "logFormat"

	// Keys of the etcd machine-id provider.
	KeyEtcdEndpoints   = "etcdEndpoints"
	KeyEtcdPrefix      = "etcdPrefix"
	KeyEtcdLeaseTTL    = "etcdLeaseTTL"
	KeyEtcdDialTimeout = "etcdDialTimeout"
	KeyEtcdUsername    = "etcdUsername"
	KeyEtcdPassword    = "etcdPassword"
	KeyEtcdCACert      = "etcdCACert"
	KeyEtcdCert        = "etcdCert"
	KeyEtcdKey         = "etcdKey"
	KeyEtcdNodeName    = "etcdNodeName"
	KeyMaxClockSkew    = "maxClockSkew"
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
)

// Machine id providers.
const (
	ProviderProperty = "property"
	ProviderIPs      = "ips"
	ProviderHostname = "hostname"
	ProviderEtcd     = "etcd"
)

// DefaultMaxBatch is the default cap on one batch request.
const DefaultMaxBatch = 10_000

// Key describes one configuration key.
type Key struct {
	Name    string // as in a file
	Flag    string // command-line flag, without "--"
	Env     string // environment variable
	Vesta   string // Vesta's property name, if any
	Default string // "" where the default depends on the program or machine
	Usage   string
}

// Keys lists every key, in documentation order.
func Keys() []Key {
	return append([]Key{
		{KeyConfig, "config", "VESTA_CONFIG", "", "", "config file (.yaml, .yml, .toml, .json or .properties)"},
		{KeyMachine, "machine", "VESTA_MACHINE", VestaMachine, "0", "machine id 0..1023 (provider property); every node needs its own"},
		{KeyMachineProvider, "machine-provider", "VESTA_MACHINE_PROVIDER", "", ProviderProperty, "where the machine id comes from: property, ips, hostname or etcd (ips when only ips is set)"},
		{KeyIPs, "ips", "VESTA_IPS", VestaIPs, "", "comma-separated site-local IPv4 list; machine id = index of this host's address (provider ips)"},
		{KeyHostname, "hostname", "VESTA_HOSTNAME", "", "", "host name for provider hostname, which takes its trailing number (default: the OS host name)"},
		{KeyGenMethod, "gen-method", "VESTA_GEN_METHOD", VestaGenMethod, "", "genMethod field 0..3 (0 embedded, 1 RPC, 2 REST); default per program"},
		{KeyType, "type", "VESTA_TYPE", VestaType, "max-peak", "ID type: max-peak (0) or min-granularity (1)"},
		{KeyVersion, "id-version", "VESTA_VERSION", "", "0", "version field 0..1"},
		{KeyPopulator, "populator", "VESTA_POPULATOR", "", "lock", "time/sequence strategy: lock, sync, atomic or packed"},
		{KeyEpoch, "epoch", "VESTA_EPOCH", "", "1420041600000", "time origin in Unix milliseconds; never change it for a running fleet"},
		{KeyDataDir, "data-dir", "VESTA_DATA_DIR", "", "", "directory for the time high-water mark (default $XDG_STATE_HOME/vesta-go or ~/.local/state/vesta-go)"},
		{KeyNoDataDir, "no-data-dir", "VESTA_NO_DATA_DIR", "", "false", "run without a high-water mark (a restart with the clock behind can repeat IDs)"},
		{KeyMaxClockBackwardWait, "max-clock-backward-wait", "VESTA_MAX_CLOCK_BACKWARD_WAIT", "", "5s", "longest wait at start for the clock to pass the high-water mark; more refuses to start"},
		{KeyListen, "listen", "VESTA_LISTEN", VestaPort, "", "listen address host:port; default per program"},
		{KeyMaxBatch, "max-batch", "VESTA_MAX_BATCH", "", "10000", "largest batch one request may ask for, 1..100000"},
		{KeyLogLevel, "log-level", "VESTA_LOG_LEVEL", "", "info", "debug, info, warn or error"},
		{KeyLogFormat, "log-format", "VESTA_LOG_FORMAT", "", "text", "text or json"},
		{KeyEtcdEndpoints, "etcd-endpoints", "VESTA_ETCD_ENDPOINTS", "", "", "comma-separated etcd endpoints, host:port or https://host:port (provider etcd)"},
		{KeyEtcdPrefix, "etcd-prefix", "VESTA_ETCD_PREFIX", "", "/vesta", "etcd key prefix; nodes sharing machine ids share it"},
		{KeyEtcdLeaseTTL, "etcd-lease-ttl", "VESTA_ETCD_LEASE_TTL", "", "10s", "etcd lease TTL, whole seconds 2s..1h: a cut-off node stops issuing within it, a crashed node's id is free after it"},
		{KeyEtcdDialTimeout, "etcd-dial-timeout", "VESTA_ETCD_DIAL_TIMEOUT", "", "5s", "timeout of connecting to etcd and of each etcd request"},
		{KeyEtcdUsername, "etcd-username", "VESTA_ETCD_USERNAME", "", "", "etcd user (with etcdPassword)"},
		{KeyEtcdPassword, "etcd-password", "VESTA_ETCD_PASSWORD", "", "", "etcd password; prefer the environment or a file to the flag"},
		{KeyEtcdCACert, "etcd-ca-cert", "VESTA_ETCD_CA_CERT", "", "", "PEM CA file that verifies the etcd servers (TLS)"},
		{KeyEtcdCert, "etcd-cert", "VESTA_ETCD_CERT", "", "", "PEM client certificate for etcd (with etcdKey)"},
		{KeyEtcdKey, "etcd-key", "VESTA_ETCD_KEY", "", "", "PEM client key for etcd (with etcdCert)"},
		{KeyEtcdNodeName, "etcd-node-name", "VESTA_ETCD_NODE_NAME", "", "", "this node's name in etcd (default hostname-pid)"},
		{KeyMaxClockSkew, "max-clock-skew", "VESTA_MAX_CLOCK_SKEW", "", "1s", "largest difference from the other live nodes' clocks (provider etcd) before refusing to start"},
	}, segmentKeys()...)
}

func vestaKeys() []string {
	var ks []string
	for _, k := range Keys() {
		if k.Vesta != "" {
			ks = append(ks, k.Vesta)
		}
	}
	return append(ks, VestaSyncLock, VestaAtomic)
}

// knownFileKey reports whether a key found in a file (lower-cased by
// viper) is one we read.
func knownFileKey(k string) bool {
	for _, key := range Keys() {
		if k == strings.ToLower(key.Name) && key.Name != KeyConfig {
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
