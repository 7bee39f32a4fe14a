package machineid

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vesta-go/vesta/intf"
)

// Range is a span of machine ids, First..Last inclusive: the ids a
// lease may claim for its fleet (etcdlease and pglease Options).
type Range struct{ First, Last int64 }

// FullRange is every machine id.
var FullRange = Range{0, intf.MaxMachine}

func (r Range) String() string         { return fmt.Sprintf("%d-%d", r.First, r.Last) }
func (r Range) Size() int64            { return r.Last - r.First + 1 }
func (r Range) Contains(id int64) bool { return id >= r.First && id <= r.Last }
func (r Range) Overlaps(o Range) bool  { return r.First <= o.Last && o.First <= r.Last }
func (r Range) Valid() bool {
	return r.First >= 0 && r.First <= r.Last && r.Last <= intf.MaxMachine
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
