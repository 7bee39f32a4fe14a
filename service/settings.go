package service

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/internal/datadir"
	"github.com/vesta-go/vesta/service/internal/sysclock"
	"github.com/vesta-go/vesta/service/machineid"
)

// MaxMaxBorrow bounds Settings.MaxBorrow: IDs never run more than an hour
// ahead of the clock.
const MaxMaxBorrow = time.Hour

// Defaults New applies to zero-valued Settings fields, stated in the
// fields' comments (TestSettingsCommentsStateDefaults).
const (
	defaultPopulator            = PopulatorLock
	defaultMaxClockBackwardWait = 5 * time.Second
)

// Settings configures a Service. The zero value is valid; WithDefaults
// shows what New makes of it.
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
	// intf.DefaultEpochMillis. It must lie in 1..the Clock's now: after
	// now the service would have no time to issue at (an error matching
	// intf.ErrTimeOverflow too). Never change it for a running fleet.
	EpochMillis int64
	// DataDir holds the time high-water mark and a lock file; "" means
	// $XDG_STATE_HOME/vesta-go, else ~/.local/state/vesta-go.
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

// checkEpoch is the rule for an epoch: Unix milliseconds from 1 up to the
// clock's now. Before 1 is out of range; after now the service would have
// no time to issue at. The error is an *intf.FieldError naming "epoch"
// (intf.ErrInvalidArgument); an epoch after now also matches
// intf.ErrTimeOverflow.
func checkEpoch(epochMillis int64, clock Clock) error {
	nowMs := clock.NowNanos() / int64(time.Millisecond)
	err := intf.CheckRange("epoch", epochMillis, 1, nowMs)
	if err == nil || epochMillis < 1 {
		return err
	}
	return fmt.Errorf("%w: the clock (%s) is before the epoch (%s): %w", intf.ErrTimeOverflow,
		time.UnixMilli(nowMs).UTC(), time.UnixMilli(epochMillis).UTC(), err)
}

// WithDefaults returns s as New uses it: its zero fields filled with the
// defaults their comments state (DataDir resolved unless NoDataDir), or
// an error naming the first wrong field, an *intf.FieldError for a number
// out of range (intf.ErrInvalidArgument). New calls it; a configuration
// loader calls it to check settings before starting anything, and to read
// the defaults (Settings{NoDataDir: true}.WithDefaults()).
func (s Settings) WithDefaults() (Settings, error) {
	if s.Populator == "" {
		s.Populator = defaultPopulator
	}
	if s.EpochMillis == 0 {
		s.EpochMillis = intf.DefaultEpochMillis
	}
	if s.MaxClockBackwardWait == 0 {
		s.MaxClockBackwardWait = defaultMaxClockBackwardWait
	}
	if s.Clock == nil {
		s.Clock = sysclock.New()
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if _, err := s.Type.Layout(); err != nil {
		return s, &intf.FieldError{Field: "type", Value: int64(s.Type), Min: 0, Max: 1}
	}
	checks := []error{
		intf.CheckRange("machine", s.Machine, 0, intf.MaxMachine),
		intf.CheckRange("genMethod", s.GenMethod, 0, intf.MaxGenMethod),
		intf.CheckRange("version", s.Version, 0, intf.MaxVersion),
		checkEpoch(s.EpochMillis, s.Clock),
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
		d, err := datadir.Default()
		if err != nil {
			return s, err
		}
		s.DataDir = d
	}
	return s, nil
}
