package segment

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/segdefault"
	"github.com/vesta-go/vesta/service/internal/sysclock"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Settings configures a Generator. Only Store is required; New validates
// every field and names the first wrong one.
type Settings struct {
	// Store holds the leaf_alloc table. The Generator owns it from New on
	// and closes it in Close.
	Store segstore.Store
	// MaxStep caps the dynamic step (1..segspec.MaxDBStep), as Leaf
	// does; 0 means 1000000. A row's own step above it is still honoured.
	MaxStep int64
	// RefreshInterval is how often the tag list is reread (1ms..24h); 0
	// means 60s.
	RefreshInterval time.Duration
	// LoadTimeout bounds one database call (1ms..10m); 0 means 5s.
	LoadTimeout time.Duration
	// WaitTimeout bounds how long a request waits for a range being loaded
	// when both buffers are used up (1ms..1m); 0 means 500ms. A request
	// never waits while the last load of the tag failed, unless it started
	// the retry.
	WaitTimeout time.Duration
	// RetryInterval is the least time between two failed loads of one tag
	// (1ms..1h): while the database is down, requests do not hammer it; 0
	// means 1s.
	RetryInterval time.Duration
	// MissRefreshInterval is the least time between two rereads of the tag
	// list that requests for an unknown tag trigger (1ms..1h), so that a tag
	// created while the Generator runs is served at its first request; a
	// flood of unknown tags costs at most one read per interval; 0 means
	// 1s. A negative value turns it off: new tags then wait for the
	// periodic refresh.
	MissRefreshInterval time.Duration
	// Clock measures the dynamic step, the retry interval, the life of a
	// period tag's range and the refresh interval; nil means the system
	// clock (see service.Clock). Only the durations measured on it decide
	// anything; Status shows its time of the last load.
	Clock service.Clock
	// Logger receives load failures, recoveries and tag changes; nil means
	// slog.Default().
	Logger *slog.Logger
}

func (s Settings) withDefaults() (Settings, error) {
	if s.Store == nil {
		return s, fmt.Errorf("%w: segment settings: segstore.Store is nil", intf.ErrInvalidArgument)
	}
	if s.MaxStep == 0 {
		s.MaxStep = segdefault.MaxStep
	}
	setDuration(&s.RefreshInterval, segdefault.RefreshInterval)
	setDuration(&s.LoadTimeout, segdefault.LoadTimeout)
	setDuration(&s.WaitTimeout, segdefault.WaitTimeout)
	setDuration(&s.RetryInterval, segdefault.RetryInterval)
	setDuration(&s.MissRefreshInterval, segdefault.MissRefreshInterval)
	if s.Clock == nil {
		s.Clock = sysclock.New()
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if err := intf.CheckRange("maxStep", s.MaxStep, 1, segspec.MaxDBStep); err != nil {
		return s, err
	}
	for _, d := range []struct {
		name     string
		v        time.Duration
		min, max time.Duration
		mayBeOff bool // a negative value turns the feature off
	}{
		{"refreshInterval", s.RefreshInterval, time.Millisecond, 24 * time.Hour, false},
		{"loadTimeout", s.LoadTimeout, time.Millisecond, 10 * time.Minute, false},
		{"waitTimeout", s.WaitTimeout, time.Millisecond, time.Minute, false},
		{"retryInterval", s.RetryInterval, time.Millisecond, time.Hour, false},
		{"missRefreshInterval", s.MissRefreshInterval, time.Millisecond, time.Hour, true},
	} {
		if d.mayBeOff && d.v < 0 {
			continue
		}
		if d.v < d.min || d.v > d.max {
			return s, fmt.Errorf("%w: segment settings: %s %s out of range %s..%s", intf.ErrInvalidArgument, d.name, d.v, d.min, d.max)
		}
	}
	return s, nil
}

func setDuration(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}
