package service

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/sysclock"
	"github.com/vesta-go/vesta/service/machineid"
)

// Defaults applied by New to zero-valued Settings fields.
const (
	DefaultPopulator            = PopulatorLock
	DefaultMaxClockBackwardWait = 5 * time.Second
	// MaxMaxBorrow bounds Settings.MaxBorrow: IDs never run more than an
	// hour ahead of the clock.
	MaxMaxBorrow = time.Hour
)

// Settings configures a Service. The zero value is valid apart from the data
// directory, which defaults to DefaultDataDir.
type Settings struct {
	// Machine is the machine id, 0..1023, used when MachineProvider is nil.
	Machine int64
	// MachineProvider, when set, supplies the machine id at start.
	MachineProvider machineid.Provider
	// Lease, when set, supplies the machine id instead, for a bounded time
	// (e.g. an etcd lease); see machineid.Lease.
	Lease machineid.Lease
	// GenMethod is stored in every ID: 0 embedded, 1 RPC, 2 REST, 3 reserved.
	GenMethod int64
	// Type selects the layout: intf.MaxPeak (default) or intf.MinGranularity.
	Type intf.IdType
	// Version is stored in bit 63: 0 or 1.
	Version int64
	// Populator names the strategy: lock (default), sync, atomic or packed.
	Populator string
	// EpochMillis is the time origin in Unix milliseconds; 0 means Vesta's
	// intf.DefaultEpochMillis. It must not lie after the Clock's now
	// (CheckEpoch). Never change it for a running fleet.
	EpochMillis int64
	// DataDir holds the time high-water mark and a lock file; "" means
	// DefaultDataDir().
	DataDir string
	// NoDataDir skips the high-water mark: a restart with the clock behind
	// the previous run can then repeat IDs. For those who accept that risk.
	NoDataDir bool
	// ResetDataDir accepts, once, a data dir that was used before but
	// holds no readable high-water mark (removed, emptied, a dangling
	// symlink), which New otherwise refuses (ErrMarkMissing,
	// ErrCorruptMark). Set it only once the clock is surely past the last
	// IDs issued from that dir. New refuses it when there is nothing to
	// reset (a readable mark, or a dir never used), so that it is never
	// left on to hide a later loss. Ignored with NoDataDir.
	ResetDataDir bool
	// MaxClockBackwardWait bounds how long New waits for the clock to pass
	// the high-water mark; a larger gap refuses to start. 0 means 5s.
	MaxClockBackwardWait time.Duration
	// MaxBorrow lets a burst run ahead of the clock: when a time unit's
	// sequence is used up, the next unit is handed out at once if it
	// starts at most MaxBorrow after now (IDs then carry a future time;
	// the marks are stored ahead of the furthest unit). 0, the default,
	// waits for the clock. At most MaxMaxBorrow. With a Lease, keep it
	// within what the lease lets a node run ahead (etcdlease and pglease:
	// 2/3 of the TTL less its fence margin and one unit), or a burst
	// borrows units the fence refuses; the servers refuse a longer one.
	MaxBorrow time.Duration
	// Clock is the time source; nil means the system clock (see Clock).
	Clock Clock
	// Logger receives start-up warnings and background events; nil means
	// slog.Default().
	Logger *slog.Logger
}

// DefaultDataDir is $XDG_STATE_HOME/vesta-go, else ~/.local/state/vesta-go.
func DefaultDataDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "vesta-go"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no default data dir (%w): set dataDir", err)
	}
	return filepath.Join(home, ".local", "state", "vesta-go"), nil
}

// CheckEpoch is the one rule for an epoch, which New applies with its
// Clock and the configuration loader with the system clock the programs
// run: Unix milliseconds from 1 up to the clock's now. Before 1 is out of
// range; after now the service would have no time to issue at. The error
// is an *intf.FieldError naming "epoch" (intf.ErrInvalidArgument); an
// epoch after now also matches intf.ErrTimeOverflow.
func CheckEpoch(epochMillis int64, clock Clock) error {
	nowMs := clock.NowNanos() / int64(time.Millisecond)
	err := intf.CheckRange("epoch", epochMillis, 1, nowMs)
	if err == nil || epochMillis < 1 {
		return err
	}
	return fmt.Errorf("%w: the clock (%s) is before the epoch (%s): %w", intf.ErrTimeOverflow,
		time.UnixMilli(nowMs).UTC(), time.UnixMilli(epochMillis).UTC(), err)
}

// withDefaults fills zero fields and validates every field, naming the
// first wrong one.
func (s Settings) withDefaults() (Settings, error) {
	if s.Populator == "" {
		s.Populator = DefaultPopulator
	}
	if s.EpochMillis == 0 {
		s.EpochMillis = intf.DefaultEpochMillis
	}
	if s.MaxClockBackwardWait == 0 {
		s.MaxClockBackwardWait = DefaultMaxClockBackwardWait
	}
	if s.Clock == nil {
		s.Clock = sysclock.New()
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if !s.Type.Valid() {
		return s, &intf.FieldError{Field: "type", Value: int64(s.Type), Min: 0, Max: 1}
	}
	checks := []error{
		intf.CheckRange("machine", s.Machine, 0, intf.MaxMachine),
		intf.CheckRange("genMethod", s.GenMethod, 0, intf.MaxGenMethod),
		intf.CheckRange("version", s.Version, 0, intf.MaxVersion),
		CheckEpoch(s.EpochMillis, s.Clock),
		intf.CheckRange("maxClockBackwardWait", int64(s.MaxClockBackwardWait), 1, int64(24*time.Hour)),
		intf.CheckRange("maxBorrow", int64(s.MaxBorrow), 0, int64(MaxMaxBorrow)),
	}
	for _, err := range checks {
		if err != nil {
			return s, err
		}
	}
	if _, ok := populators[s.Populator]; !ok {
		return s, fmt.Errorf("%w: populator %q: want one of %v", intf.ErrInvalidArgument, s.Populator, Populators())
	}
	if !s.NoDataDir && s.DataDir == "" {
		d, err := DefaultDataDir()
		if err != nil {
			return s, err
		}
		s.DataDir = d
	}
	return s, nil
}
