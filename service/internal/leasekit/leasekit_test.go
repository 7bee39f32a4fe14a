package leasekit

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/vesta-go/vesta/intf"
)

func TestNextSkip(t *testing.T) {
	refused := &MarksAheadError{Refused: []MarkRefusal{{Machine: 3}, {Machine: 5}}, Err: intf.ErrClockBehind}
	assert.Equal(t, map[int64]bool{1: true, 3: true, 5: true}, NextSkip(map[int64]bool{1: true}, refused),
		"the ids refused so far are skipped by the next attempt")
	refused.Exhausted = true
	assert.Nil(t, NextSkip(map[int64]bool{1: true}, refused), "every free id was tried: start over")
	assert.Nil(t, NextSkip(map[int64]bool{1: true}, errors.New("etcd down")), "another failure: start over")
}

func TestRefuseStopsAtTheBound(t *testing.T) {
	e := &MarksAheadError{}
	skip := map[int64]bool{}
	now := time.Now().UnixNano()
	for i := range int64(MaxMarkRefusals) {
		r, full := e.Refuse(i, now/int64(time.Millisecond)+10_000, now, intf.ErrClockBehind, skip)
		assert.Equal(t, i == MaxMarkRefusals-1, full)
		assert.InDelta(t, float64(10*time.Second), float64(r.Ahead), float64(time.Millisecond))
	}
	assert.Len(t, skip, MaxMarkRefusals)
	assert.ErrorIs(t, e, intf.ErrClockBehind)
}

func TestOfflineValidity(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const ms = int64(time.Millisecond)
	st := State{Saved: 1000 * ms, ValidUntil: 5000 * ms, StoredMarkMs: 4000}
	assert.Equal(t, 4000*ms, st.OfflineValidity(2000*ms, log, "p", "db", nil), "no later than the mark known stored")
	st.StoredMarkMs = 9000
	assert.Equal(t, 5000*ms, st.OfflineValidity(2000*ms, log, "p", "db", nil), "no later than the saved validity")
	assert.Zero(t, st.OfflineValidity(5000*ms, log, "p", "db", nil), "the validity has run out")
	assert.Zero(t, st.OfflineValidity(500*ms, log, "p", "db", nil), "a clock before the save stepped back: nothing is trusted")
	assert.Equal(t, State{Saved: 1000 * ms, StoredMarkMs: 0}, st.Released(), "a released state resumes nothing")
}

func TestTimings(t *testing.T) {
	var ttl, dial, skew time.Duration
	tm := Timings{TTL: &ttl, DialTimeout: &dial, MaxClockSkew: &skew}
	tm.Fill()
	assert.Equal(t, []time.Duration{DefaultTTL, DefaultDialTimeout, DefaultMaxClockSkew}, []time.Duration{ttl, dial, skew})
	assert.Nil(t, CheckAll("p", tm.Checks()...))
	ttl = 2500 * time.Millisecond
	err := CheckAll("p", tm.Checks()...)
	assert.Equal(t, "TTL", err.Option)
	assert.Equal(t, `p: option TTL "2.5s": want whole seconds 2s..1h0m0s`, err.Error())
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
}
