package leasekit

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/vesta-go/vesta/intf"
)

// Range is a span of machine ids, First..Last inclusive.
type Range struct{ First, Last int64 }

// FullRange is every machine id.
var FullRange = Range{0, intf.MaxMachine}

func (r Range) String() string         { return fmt.Sprintf("%d-%d", r.First, r.Last) }
func (r Range) Size() int64            { return r.Last - r.First + 1 }
func (r Range) Contains(id int64) bool { return id >= r.First && id <= r.Last }
func (r Range) Overlaps(o Range) bool  { return r.First <= o.Last && o.First <= r.Last }
func (r Range) Valid() bool            { return r.First >= 0 && r.First <= r.Last && r.Last <= intf.MaxMachine }
func (r Range) free(skip, taken map[int64]bool, id int64) bool {
	return r.Contains(id) && !taken[id] && !skip[id]
}

// ParseRange reads "first-last" (e.g. "0-511") or a single id.
func ParseRange(s string) (Range, error) {
	lo, hi, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		hi = lo
	}
	first, err1 := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
	last, err2 := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
	r := Range{first, last}
	if err1 != nil || err2 != nil || !r.Valid() {
		return Range{}, fmt.Errorf("%w: machine range %q: want first-last within 0-%d, first <= last (e.g. 0-511)", intf.ErrInvalidArgument, s, intf.MaxMachine)
	}
	return r, nil
}

// Pick chooses the id to claim: prefer if it is in r and not known taken,
// else a random id of r neither taken nor in skip (taken nil: no listing
// yet, any id may be free); lowest picks the lowest (tests). ok is false
// when none is left. Random picks spread N nodes starting at once over the
// range, rather than racing for the lowest free id.
func Pick(r Range, prefer int64, skip, taken map[int64]bool, lowest bool) (id int64, ok bool) {
	if prefer >= 0 && r.free(skip, taken, prefer) {
		return prefer, true
	}
	if !lowest && int(r.Size())-len(skip)-len(taken) > int(r.Size())/4 {
		for range 16 { // mostly free: a few draws find one
			if id := r.First + rand.Int64N(r.Size()); r.free(skip, taken, id) {
				return id, true
			}
		}
	}
	var ids []int64
	for id := r.First; id <= r.Last; id++ {
		if r.free(skip, taken, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, false
	}
	if lowest {
		return ids[0], true
	}
	return ids[rand.IntN(len(ids))], true
}
