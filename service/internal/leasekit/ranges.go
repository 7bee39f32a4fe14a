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

func (r Range) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// Size is the number of ids in r.
func (r Range) Size() int64 { return r.Last - r.First + 1 }

// Contains tells whether id lies in r.
func (r Range) Contains(id int64) bool { return id >= r.First && id <= r.Last }

// Overlaps tells whether r and o share an id.
func (r Range) Overlaps(o Range) bool { return r.First <= o.Last && o.First <= r.Last }

// Valid tells whether r is a non-empty span of machine ids.
func (r Range) Valid() bool { return r.First >= 0 && r.First <= r.Last && r.Last <= intf.MaxMachine }

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
// else a random id of r neither taken nor in skip. taken nil means no
// listing yet: any id may be free. lowest picks the lowest such id
// instead (tests). ok is false when no id is left.
//
// Random picks spread N nodes starting at once over the range, so that
// they do not all race for the lowest free id.
func Pick(r Range, prefer int64, skip, taken map[int64]bool, lowest bool) (id int64, ok bool) {
	free := func(id int64) bool { return r.Contains(id) && !taken[id] && !skip[id] }
	if prefer >= 0 && free(prefer) {
		return prefer, true
	}
	if lowest {
		for id := r.First; id <= r.Last; id++ {
			if free(id) {
				return id, true
			}
		}
		return 0, false
	}
	n := int(r.Size()) - len(skip) - len(taken) // a lower bound of the free ids' count
	if n > int(r.Size())/4 {
		// Mostly free: random draws find one in a few tries.
		for range 16 {
			if id := r.First + rand.Int64N(r.Size()); free(id) {
				return id, true
			}
		}
	}
	var ids []int64
	for id := r.First; id <= r.Last; id++ {
		if free(id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, false
	}
	return ids[rand.IntN(len(ids))], true
}
