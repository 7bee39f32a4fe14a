package segspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vesta-go/vesta/intf"
)

// Tag defaults for ParseTags and the vesta-segment CLI.
const (
	// DefaultInitialMaxId makes the first ID of a new tag 1, as Leaf's
	// sample row does.
	DefaultInitialMaxId = 1
	// DefaultTagStep is a new tag's step: Leaf's advice is about 600 times
	// the peak IDs per second.
	DefaultTagStep = 1000
)

// MaxDBStep is the largest row step (leaf_alloc.step is a 32-bit INT).
const MaxDBStep = 1<<31 - 1

// Tag is a tag to create: its name, the first ID to issue (the row's
// initial max_id) and the row's step.
type Tag struct {
	Tag   string
	MaxId int64
	Step  int64
}

// Validate checks the tag's name (intf.CheckTag), its step (1..MaxDBStep)
// and its first ID (at least one range of the step must fit below
// math.MaxInt64), naming the first bad field.
func (t Tag) Validate() error {
	if err := intf.CheckTag(t.Tag); err != nil {
		return err
	}
	if err := intf.CheckRange("step", t.Step, 1, MaxDBStep); err != nil {
		return err
	}
	return intf.CheckRange("initialMaxId", t.MaxId, 0, math.MaxInt64-t.Step)
}

// ParseTags reads a comma-separated list of tag[:initialMaxId[:step]], e.g.
// "order,invoice:1000:500". initialMaxId (default 1) is the first ID to
// issue, step (default 1000) the row's step. Blanks around items are
// ignored; "" is an empty list. A tag listed twice is an error.
func ParseTags(list string) ([]Tag, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var tags []Tag
	seen := map[string]bool{}
	for _, item := range strings.Split(list, ",") {
		t, err := parseTag(strings.TrimSpace(item))
		if err != nil {
			return nil, fmt.Errorf("tag spec %q: %w", strings.TrimSpace(item), err)
		}
		if seen[t.Tag] {
			return nil, fmt.Errorf("tag spec %q: %w: tag listed twice", item, intf.ErrInvalidArgument)
		}
		seen[t.Tag] = true
		tags = append(tags, t)
	}
	return tags, nil
}

func parseTag(item string) (Tag, error) {
	parts := strings.Split(item, ":")
	if len(parts) > 3 {
		return Tag{}, fmt.Errorf("%w: want tag[:initialMaxId[:step]]", intf.ErrInvalidArgument)
	}
	t := Tag{Tag: parts[0], MaxId: DefaultInitialMaxId, Step: DefaultTagStep}
	for i, dst := range []*int64{&t.MaxId, &t.Step} {
		if len(parts) <= i+1 {
			break
		}
		n, err := strconv.ParseInt(strings.TrimSpace(parts[i+1]), 10, 64)
		if err != nil {
			return Tag{}, fmt.Errorf("%w: %q is not an integer", intf.ErrInvalidArgument, parts[i+1])
		}
		*dst = n
	}
	return t, t.Validate()
}
