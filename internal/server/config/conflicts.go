package config

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/lease"
)

// conflict refuses name, set, because other (its value otherValue)
// makes it meaningless; why says how. Precedence decides between layers:
// when other was set at a higher layer than name (a flag over the file's
// setup), other is in force and name is not refused.
func (r *reader) conflict(name, other, otherValue, why string) {
	if r.err != nil || r.source(other).Layer > r.source(name).Layer {
		return
	}
	v, _, _ := r.lookup(name)
	value, secret := secretKeys[name]
	if !secret {
		value = r.text(v)
	}
	r.err = &ConflictError{Key: name, Value: value, Source: r.source(name),
		Other: other, OtherValue: otherValue, OtherSource: r.source(other), Why: why}
}

// text is a raw value as the operator wrote it (a YAML list comma-joined).
func (r *reader) text(v any) string {
	if l, isList := v.([]any); isList {
		s := ""
		for i, e := range l {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprint(e)
		}
		return s
	}
	return fmt.Sprint(v)
}

// setName returns the first of names that a layer sets, "" when none.
func (r *reader) setName(names ...string) string {
	for _, n := range names {
		if n != "" && r.isSet(n) {
			return n
		}
	}
	return ""
}

// checkProviderKeys refuses the key that gives the machine id under one
// provider — machine, ips, hostname, etcdEndpoints — when another provider
// is in force (given, or the default): a node meant to take its id from
// etcd or the host name would run as machine 0, or a machine id given
// would be silently replaced. withEtcd: the program reads the etcd keys.
// (Without machineProvider, machine and ips choose the provider
// themselves: machine.)
func (r *reader) checkProviderKeys(provider string, withEtcd bool) {
	explicit := r.isSet(KeyMachineProvider)
	keys := []struct {
		names    []string
		provider string
		hint     string
	}{
		{[]string{KeyMachine, VestaMachine}, ProviderProperty, ""},
		{[]string{KeyIPs, VestaIPs}, ProviderIPs, ""},
		{[]string{KeyHostname}, ProviderHostname, ""},
	}
	if withEtcd {
		keys = append(keys, struct {
			names    []string
			provider string
			hint     string
		}{[]string{KeyEtcdEndpoints}, ProviderEtcd, " (set machineProvider etcd to lease the id from etcd)"}, struct {
			names    []string
			provider string
			hint     string
		}{[]string{KeyMachineDSN}, ProviderPostgres, " (set machineProvider postgres to lease the id from PostgreSQL)"})
	}
	for _, k := range keys {
		if provider == k.provider || !explicit && (k.provider == ProviderProperty || k.provider == ProviderIPs) {
			continue
		}
		if name := r.setName(k.names...); name != "" {
			r.conflict(name, KeyMachineProvider, provider,
				fmt.Sprintf("machineProvider %s takes the machine id from %s, so %s would be ignored%s", provider, providerSource[provider], name, k.hint))
		}
	}
}

// providerSource says where each provider takes the machine id from.
var providerSource = map[string]string{
	ProviderProperty: "the machine key",
	ProviderIPs:      "this host's index in the ips list",
	ProviderHostname: "the host name's trailing number",
	ProviderEtcd:     "an etcd lease",
	ProviderPostgres: "a claim in a PostgreSQL table",
}

// checkDataDirKeys refuses a data dir, or (withReset: the program reads
// resetDataDir) a reset of it, together with noDataDir.
func (r *reader) checkDataDirKeys(noDataDir, withReset bool) {
	if !noDataDir {
		return
	}
	if r.isSet(KeyDataDir) {
		r.conflict(KeyDataDir, KeyNoDataDir, boolean(true), "noDataDir runs without a data dir, so dataDir would be ignored")
	}
	if withReset && r.bool(KeyResetDataDir, "", false) {
		r.conflict(KeyResetDataDir, KeyNoDataDir, boolean(true), "noDataDir runs without a data dir, so there is no mark to reset")
	}
}

// warnIneffective logs the settings read that have no effect in vesta-go
// (Vesta's registry), naming where they were set but not their values.
func (r *reader) warnIneffective(log *slog.Logger) {
	if r.isSet(VestaRegisterCenter) {
		log.Warn("vesta: config key "+VestaRegisterCenter+" has no effect: vesta-go registers with no registry; "+
			"give the clients the servers' addresses (client.New, docs/rpc.md)", "source", r.source(VestaRegisterCenter).String())
	}
}

// checkBorrow refuses a maxBorrow longer than a leased node may issue
// ahead of its clock: it issues only below its lease's validity, which
// lies at least 2/3 of the TTL less the fence margin ahead of the clock
// (just before a renewal), and a borrowed unit must end within it. Past
// that a burst would borrow units the fence refuses: 503s while the lease
// is fine.
func (r *reader) checkBorrow(s service.Settings, ttl time.Duration, provider string) {
	if r.err != nil || s.MaxBorrow == 0 || (provider != ProviderEtcd && provider != ProviderPostgres) {
		return
	}
	unit := time.Second
	if s.Type == intf.MinGranularity {
		unit = time.Millisecond
	}
	if ahead := 2*ttl/3 - lease.FenceMargin(ttl) - unit; s.MaxBorrow > ahead {
		r.err = &ConflictError{Key: KeyMaxBorrow, Value: s.MaxBorrow.String(), Source: r.source(KeyMaxBorrow),
			Other: KeyLeaseTTL, OtherValue: ttl.String(), OtherSource: r.source(KeyLeaseTTL),
			Why: fmt.Sprintf("a node leasing its machine id issues only within its lease's validity, which may be as little as %s ahead of the clock "+
				"(2/3 of the TTL less the fence margin and one unit): units borrowed further would be refused as fenced (503) under a burst; "+
				"lower maxBorrow to at most %s or raise leaseTTL", ahead, ahead)}
	}
}
