package leasekit

import (
	"time"

	"github.com/vesta-go/vesta/service/machineid"
)

// The floors a hold starts above. A coordinator can forget an id while its holder
// runs (a wipe, a backup restored, marks set back): no claim trusts a mark alone.

// verifyAttempt bounds one read of verify, whatever the TTL.
func (e *Engine) verifyAttempt() time.Duration { return min(e.c.DialTimeout, RetryInterval) }

// noticeBound is the longest a holder that reaches its coordinator issues after
// its claim is gone: a verify interval, then the read.
func (e *Engine) noticeBound() time.Duration { return VerifyInterval + e.verifyAttempt() }

// claimFloor is the floor of a hold of id claimed with c:
//   - own, the id this process lost last, its mark still the one it stored last
//     (none stored since, nothing forgotten): its own floor, or the mark capped
//     at now + lead (the IDs above were ours);
//   - else the mark and now + fleetLead + noticeBound, the furthest a holder
//     whose claim vanished issues before it stops;
//   - a lost mark: now + TTL + fleetLead, the furthest a holder cut off issued.
func (e *Engine) claimFloor(h machineid.Holder, id int64, c Claimed, own *hold) int64 {
	now := h.Now()
	ms := func(d time.Duration) int64 { return (now + int64(d)) / int64(time.Millisecond) }
	if !c.MarkLost && own != nil && own.machine == id && c.Mark == own.storedMark.Load() {
		return max(own.prevMark, min(c.Mark, ms(h.Lead())))
	}
	floor := max(c.Mark, ms(e.fleetLead()+e.noticeBound()))
	if c.MarkLost {
		floor = max(floor, ms(e.c.TTL+e.fleetLead()))
		e.c.Logger.Warn(e.c.Provider+": the id claimed was held but has no mark left; starting above the furthest its last holder may have issued",
			"machine", id, "above", time.UnixMilli(floor).UTC())
	}
	return floor
}

// resumeFloor is the floor of a resume of st at now: its claim's floor and now +
// lead. The previous run on this (locked) data dir stopped before now.
func resumeFloor(now int64, lead time.Duration, st *State) int64 {
	return max(st.ClaimMarkMs, (now+int64(lead))/int64(time.Millisecond))
}
