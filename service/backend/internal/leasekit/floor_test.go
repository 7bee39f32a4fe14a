package leasekit

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/backend/internal/outage"
	"github.com/vesta-go/vesta/service/backend/lease"
	"github.com/vesta-go/vesta/service/machineid"
)

// claimBackend's claims find c; its renewals fail with renewErr (nil: ok);
// its layout record holds fleetLead when larger than the node's.
type claimBackend struct {
	markBackend
	c         Claimed
	renewErr  error
	fleetLead time.Duration
}

// SwapLayout stores rec with its lead raised to fleetLead, as if another node had.
func (b *claimBackend) SwapLayout(_ context.Context, _, rec []byte) ([]byte, error) {
	var r layoutRecord
	if err := json.Unmarshal(rec, &r); err != nil {
		return nil, err
	}
	r.LeadMillis = max(r.LeadMillis, b.fleetLead.Milliseconds())
	return json.Marshal(r)
}

func (b *claimBackend) TryClaim(context.Context, int64, int64) (Claimed, error) { return b.c, nil }
func (b *claimBackend) Renew(ctx context.Context, c Claim) (time.Duration, error) {
	if b.renewErr != nil {
		return 0, b.renewErr
	}
	return b.markBackend.Renew(ctx, c)
}

func testConfig(ttl time.Duration) Config {
	return Config{
		Provider: "test",
		Common:   lease.Common{Prefix: "/p", TTL: ttl, DialTimeout: 5 * time.Second, MachineRange: &machineid.Range{First: 1, Last: 1}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
	}
}

// firstFloor runs e until its first hold and returns the floor held above
// and when the hold came (the fake clock).
func firstFloor(t *testing.T, e *Engine, st []byte) (floor int64, at time.Time) {
	h := &stateHolder{holder: holder{held: make(chan struct{})}, st: st, floor: make(chan int64, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- e.Run(ctx, h) }()
	floor = <-h.floor
	at = time.Now()
	cancel()
	<-done
	return floor, at
}

// A claim that finds no trace of its id, or a mark it cannot trust to be
// its holder's last, starts above now + the fleet's lead + noticeBound (a
// wiped holder's furthest ID) and waits for it down to its own lead; a
// mark further ahead is its floor; a lost mark keeps now + TTL + lead.
func TestNoTraceFloor(t *testing.T) {
	for _, tc := range []struct {
		name            string
		claimed         func(now time.Time) Claimed
		wantFloor, wait time.Duration // from now
		fleetLead       time.Duration // the layout record's
	}{
		{"no trace", func(time.Time) Claimed { return Claimed{OK: true} }, 4500 * time.Millisecond, 1500 * time.Millisecond, 0},
		{"a mark set back (a restored backup)", func(now time.Time) Claimed {
			return Claimed{OK: true, Mark: now.Add(-time.Hour).UnixMilli()}
		}, 4500 * time.Millisecond, 1500 * time.Millisecond, 0},
		{"a mark further ahead: its own", func(now time.Time) Claimed {
			return Claimed{OK: true, Mark: now.Add(8 * time.Second).UnixMilli()}
		}, 8 * time.Second, 5 * time.Second, 0},
		{"a lost mark: now + TTL + lead", func(time.Time) Claimed { return Claimed{OK: true, MarkLost: true} }, 13 * time.Second, 10 * time.Second, 0},
		{"no trace, a node of the fleet borrowing 3 s", func(time.Time) Claimed { return Claimed{OK: true} }, 7500 * time.Millisecond, 4500 * time.Millisecond, 6 * time.Second},
		{"a lost mark, a node of the fleet borrowing 3 s", func(time.Time) Claimed { return Claimed{OK: true, MarkLost: true} }, 16 * time.Second, 13 * time.Second, 6 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				now := time.Now()
				e := NewEngine(testConfig(10*time.Second), &claimBackend{c: tc.claimed(now), fleetLead: tc.fleetLead})
				require.Equal(t, 1500*time.Millisecond, e.noticeBound())
				floor, at := firstFloor(t, e, nil)
				assert.Equal(t, now.Add(tc.wantFloor).UnixMilli(), floor)
				assert.Equal(t, now.Add(tc.wait), at, "held once the floor was within the lead")
			})
		})
	}
}

// A resume starts above now + lead whatever the marks say — the
// coordinator's and the data dir's may both be restored from backups of
// one moment — and above its claim's floor; online or offline, at once
// unless a floor lies beyond this run's lead.
func TestResumeStartsAboveNowPlusLead(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		mark, claim, leadNow time.Duration // from now
		renewErr             error
		want, wait           time.Duration
	}{
		{"the coordinator's mark restored, behind the clock", -time.Hour, -time.Hour, 0, nil, 3 * time.Second, 0},
		{"the coordinator's mark a validity ahead", 50 * time.Second, -time.Hour, 0, nil, 3 * time.Second, 0},
		{"the claim's floor ahead", -time.Hour, 4 * time.Second, 0, nil, 4 * time.Second, time.Second},
		{"the saving run's lead was longer: waited down to this one's", -time.Hour, -time.Hour, 5 * time.Second, nil, 5 * time.Second, 2 * time.Second},
		{"offline, the data dir restored", -time.Hour, -time.Hour, 0, outage.Error{Err: context.DeadlineExceeded}, 3 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				now := time.Now()
				st, _ := json.Marshal(State{Prefix: "/p", Host: hostname(), Lease: 9, Machine: 1, ClaimMarkMs: now.Add(tc.claim).UnixMilli(),
					StoredMarkMs: now.Add(time.Minute).UnixMilli(), ValidUntil: now.Add(time.Minute).UnixNano(), Saved: now.Add(-time.Second).UnixNano(),
					LeadNs: int64(tc.leadNow)})
				e := NewEngine(testConfig(time.Minute), &claimBackend{markBackend: markBackend{mark: now.Add(tc.mark).UnixMilli()}, renewErr: tc.renewErr})
				floor, at := firstFloor(t, e, st)
				assert.Equal(t, now.Add(tc.want).UnixMilli(), floor)
				assert.Equal(t, now.Add(tc.wait), at, "waited only for the floor beyond this run's lead")
				assert.Equal(t, uint64(1), e.Stats().Resumes, "resumed, not claimed")
			})
		})
	}
}

// verifyBackend's reads of a claim hang until their context ends.
type verifyBackend struct {
	hangingBackend
	mu    sync.Mutex
	reads [][2]time.Time // start, end
}

func (b *verifyBackend) Held(ctx context.Context, _ Claim) (int64, error) {
	start := time.Now()
	<-ctx.Done()
	b.mu.Lock()
	b.reads = append(b.reads, [2]time.Time{start, time.Now()})
	b.mu.Unlock()
	return 0, outage.Error{Err: ctx.Err()}
}

// The check that a holder's claim is its own starts every VerifyInterval
// and gives up after RetryInterval, whatever the TTL: a claim gone is
// noticed within noticeBound, the bound every other claim's floor counts on.
func TestVerifyReadsAreBoundedAndRegular(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &verifyBackend{}
		e := NewEngine(testConfig(time.Minute), b)
		h := &holder{held: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- e.Run(ctx, h) }()
		<-h.held
		time.Sleep(5 * time.Second)
		synctest.Wait()
		cancel()
		<-done
		b.mu.Lock()
		defer b.mu.Unlock()
		require.GreaterOrEqual(t, len(b.reads), 4)
		for i, r := range b.reads[:4] {
			assert.Equal(t, RetryInterval, r[1].Sub(r[0]), "read %d gives up after RetryInterval", i)
			if i > 0 {
				assert.Equal(t, VerifyInterval, r[0].Sub(b.reads[i-1][0]), "read %d starts a verify interval after the one before", i)
			}
		}
	})
}

// Its own id claimed again after a loss keeps its own floor only while the
// coordinator holds the very mark it stored last: a mark forgotten (a wipe,
// a restored dump) or another holder's since starts above the fleet's lead
// and the notice bound, as any claim.
func TestOwnIdFloorOnlyOnItsOwnMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := NewEngine(testConfig(10*time.Second), &claimBackend{})
		e.raiseLead(3 * time.Second)
		h := &holder{}
		now := time.Now()
		own := newHold(h, 1, 7)
		own.prevMark = now.Add(-time.Hour).UnixMilli()
		own.storedMark.Store(now.Add(2 * time.Second).UnixMilli())
		general := now.Add(4500 * time.Millisecond).UnixMilli()
		for _, tc := range []struct {
			name string
			mark int64
			want int64
		}{
			{"its own last mark", own.storedMark.Load(), own.storedMark.Load()},
			{"no mark: forgotten", 0, general},
			{"a mark restored from before", now.Add(-time.Minute).UnixMilli(), general},
			{"another holder's since", own.storedMark.Load() + 1, general},
		} {
			assert.Equal(t, tc.want, e.claimFloor(h, 1, Claimed{OK: true, Mark: tc.mark}, own), tc.name)
		}
		assert.Equal(t, general, e.claimFloor(h, 2, Claimed{OK: true, Mark: own.storedMark.Load()}, own), "another id")
	})
}

// A lead of a fraction of a millisecond is joined as stored (whole ms, up):
// the join settles in one write rather than racing itself.
func TestJoinLayoutWithAFractionalLead(t *testing.T) {
	b := &memLayout{}
	e := NewEngine(Config{Provider: "test", Layout: "key /p/layout", Common: lease.Common{Prefix: "/p", TTL: 10 * time.Second, DialTimeout: time.Second}}, b)
	h := &fracHolder{}
	require.NoError(t, e.checkLayout(t.Context(), h, false))
	assert.Equal(t, 1, b.swaps)
	assert.Equal(t, 3003*time.Millisecond, e.fleetLead())
}

type fracHolder struct{ holder }

func (*fracHolder) Lead() time.Duration { return 3*time.Second + 2500*time.Microsecond }

// silentBackend answers nothing: every call waits for its context to end.
type silentBackend struct{ hangingBackend }

func (*silentBackend) SwapLayout(ctx context.Context, _, _ []byte) ([]byte, error) {
	<-ctx.Done()
	return nil, outage.Error{Err: ctx.Err()}
}

func (*silentBackend) Renew(ctx context.Context, _ Claim) (time.Duration, error) {
	<-ctx.Done()
	return 0, outage.Error{Err: ctx.Err()}
}

// A restart whose coordinator is silent resumes its saved claim after one
// dial timeout and one renewal attempt (the layout check): not two dial
// timeouts, which would spend the saved validity.
func TestOfflineResumeWaitsOneDialTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		st, _ := json.Marshal(State{Prefix: "/p", Host: hostname(), Lease: 9, Machine: 1, ClaimMarkMs: now.UnixMilli(),
			StoredMarkMs: now.Add(time.Minute).UnixMilli(), ValidUntil: now.Add(time.Minute).UnixNano(), Saved: now.Add(-time.Second).UnixNano()})
		e := NewEngine(testConfig(10*time.Second), &silentBackend{})
		_, at := firstFloor(t, e, st)
		assert.Equal(t, now.Add(5*time.Second+attempt(10*time.Second, 5*time.Second)), at)
		assert.Equal(t, uint64(1), e.Stats().Resumes)
	})
}
