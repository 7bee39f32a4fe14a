package service_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/internal/sysclock"
	"github.com/vesta-go/vesta/service/machineid"
)

func TestSettingsValidation(t *testing.T) {
	cases := []struct {
		name  string
		s     service.Settings
		field string // the field the error must name
		rng   bool   // a *intf.FieldError (a range error)
	}{
		{"machine -1", service.Settings{Machine: -1}, "machine", true},
		{"machine 1024", service.Settings{Machine: 1024}, "machine", true},
		{"genMethod -1", service.Settings{GenMethod: -1}, "genMethod", true},
		{"genMethod 4", service.Settings{GenMethod: 4}, "genMethod", true},
		{"version -1", service.Settings{Version: -1}, "version", true},
		{"version 2", service.Settings{Version: 2}, "version", true},
		{"type 2", service.Settings{Type: 2}, "type", true},
		{"type -1", service.Settings{Type: -1}, "type", true},
		{"negative epoch", service.Settings{EpochMillis: -1}, "epoch", true},
		{"epoch far in the future", service.Settings{EpochMillis: time.Now().Add(2 * 365 * 24 * time.Hour).UnixMilli()}, "epoch", true},
		{"maxClockBackwardWait negative", service.Settings{MaxClockBackwardWait: -time.Second}, "maxClockBackwardWait", true},
		{"maxClockBackwardWait over a day", service.Settings{MaxClockBackwardWait: 25 * time.Hour}, "maxClockBackwardWait", true},
		{"populator nope", service.Settings{Populator: "nope"}, "populator", false},
		{"populator empty-ish", service.Settings{Populator: " "}, "populator", false},
		{"provider out of range", service.Settings{MachineProvider: machineid.Fixed(1024)}, "machine", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.s.DataDir = dir
			c.s.Clock = newFakeClock(testStart)
			c.s.Logger = discardLog
			svc, err := service.New(bg, c.s)
			require.Error(t, err)
			assert.Nil(t, svc)
			assert.Contains(t, err.Error(), c.field, "the error names the field")
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			var fe *intf.FieldError
			if c.rng {
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, c.field, fe.Field)
			}
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries, "an invalid configuration touches no data dir")
		})
	}
}

func TestSettingsDefaultsAndLimits(t *testing.T) {
	clk := newFakeClock(testStart)
	dir := t.TempDir()
	svc, err := service.New(bg, service.Settings{DataDir: dir, Clock: clk, Logger: discardLog})
	require.NoError(t, err)
	defer svc.Close()
	s := svc.Settings()
	assert.Equal(t, service.PopulatorLock, s.Populator)
	assert.Equal(t, intf.DefaultEpochMillis, s.EpochMillis)
	assert.Equal(t, 5*time.Second, s.MaxClockBackwardWait)
	assert.Equal(t, intf.MaxPeak, s.Type)
	assert.Equal(t, dir, s.DataDir)
	assert.Same(t, clk, s.Clock.(*fakeClock))
	assert.NotNil(t, s.Logger)

	// Each field at its limit is accepted.
	for _, ok := range []service.Settings{
		{Machine: 1023, GenMethod: 3, Version: 1, Type: intf.MinGranularity},
		{Machine: 0, GenMethod: 0, Version: 0, Type: intf.MaxPeak},
		{MaxClockBackwardWait: time.Nanosecond},
		{MaxClockBackwardWait: 24 * time.Hour},
		{EpochMillis: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()},
	} {
		ok.NoDataDir, ok.Clock, ok.Logger = true, newFakeClock(testStart), discardLog
		svc, err := service.New(bg, ok)
		require.NoError(t, err, "%+v", ok)
		require.NoError(t, svc.Close())
	}
	// A nil clock is the system clock.
	svc2 := newSvc(t, service.Settings{})
	assert.IsType(t, &sysclock.Clock{}, svc2.Settings().Clock)
}

func TestSettingsMachineProvider(t *testing.T) {
	// The provider's id replaces Settings.Machine and lands in every ID.
	svc := newSvc(t, service.Settings{Machine: 5, MachineProvider: machineid.Hostname{Hostname: "ids-42"}, Clock: newFakeClock(testStart)})
	assert.Equal(t, int64(42), svc.Settings().Machine)
	assert.Equal(t, int64(42), svc.Stats().Machine)
	id, err := svc.GenId(bg)
	require.NoError(t, err)
	assert.Equal(t, int64(42), fieldsOf(id).Machine)
	made, err := svc.MakeId(bg, intf.MakeIdRequest{Time: 1, Seq: 1})
	require.NoError(t, err)
	assert.Equal(t, int64(42), fieldsOf(made).Machine, "MakeId's default machine is the resolved one")

	// A failing provider fails New, and its error is kept.
	boom := errors.New("boom")
	_, err = service.New(bg, service.Settings{NoDataDir: true, Logger: discardLog, MachineProvider: failingProvider{boom}})
	assert.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "machine id")
	// A provider's id out of range is refused.
	_, err = service.New(bg, service.Settings{NoDataDir: true, Logger: discardLog, MachineProvider: rawProvider(2000)})
	var fe *intf.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "machine", fe.Field)
	assert.Equal(t, int64(2000), fe.Value)
}

type failingProvider struct{ err error }

func (p failingProvider) MachineId(context.Context) (int64, error) { return 0, p.err }

// rawProvider returns its value without any check.
type rawProvider int64

func (p rawProvider) MachineId(context.Context) (int64, error) { return int64(p), nil }

func TestSettingsEveryValidCombination(t *testing.T) {
	// Every type × version × genMethod × populator issues IDs carrying
	// exactly its settings.
	for _, typ := range bothTypes {
		for version := int64(0); version <= 1; version++ {
			for gm := int64(0); gm <= 3; gm++ {
				for _, pop := range service.Populators() {
					svc := newSvc(t, service.Settings{Type: typ, Version: version, GenMethod: gm, Populator: pop, Machine: 700, Clock: newFakeClock(testStart)})
					ids, err := svc.GenIds(bg, 3)
					require.NoError(t, err)
					for _, id := range ids {
						f := fieldsOf(id)
						assert.Equal(t, intf.IdFields{Machine: 700, GenMethod: gm, Type: int64(typ), Version: version, Time: f.Time, Seq: f.Seq}, f)
						assert.Equal(t, version == 1, id < 0)
					}
					require.NoError(t, svc.Close())
				}
			}
		}
	}
}

// The epoch is checked against the service's own Clock, not the wall
// clock: one rule (Settings.WithDefaults, which New applies), 1..the
// clock's now.
func TestEpochCheckedAgainstTheInjectedClock(t *testing.T) {
	later := time.Date(2090, 1, 1, 0, 0, 0, 0, time.UTC) // far past the wall clock
	svc, err := service.New(bg, service.Settings{EpochMillis: time.Date(2080, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(),
		NoDataDir: true, Clock: newFakeClock(later), Logger: discardLog})
	require.NoError(t, err, "an epoch before the injected clock's now is valid")
	require.NoError(t, svc.Close())

	clk := newFakeClock(testStart)
	now := testStart.UnixMilli()
	checkEpoch := func(ms int64) error {
		_, err := service.Settings{EpochMillis: ms, NoDataDir: true, Clock: clk}.WithDefaults()
		return err
	}
	require.NoError(t, checkEpoch(now), "now itself is valid")
	require.NoError(t, checkEpoch(1))
	for _, bad := range []int64{-1, now + 1} { // 0 means the default
		err := checkEpoch(bad)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, "%d", bad)
		assert.Equal(t, intf.FieldError{Field: "epoch", Value: bad, Min: 1, Max: now}, *fe)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		assert.Equal(t, bad > now, errors.Is(err, intf.ErrTimeOverflow), "only an epoch after now is a time overflow")
	}
	_, err = service.New(bg, service.Settings{EpochMillis: now + 1, NoDataDir: true, Clock: clk, Logger: discardLog})
	var fe *intf.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "epoch", fe.Field)
	assert.ErrorIs(t, err, intf.ErrTimeOverflow)
	assert.Contains(t, err.Error(), "before the epoch")
}
