package segment

import (
	"context"
	"errors"
	"fmt"
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

// ParseTags reads a comma-separated list of tag[:initialMaxId[:step]], e.g.
// "order,invoice:1000:500". initialMaxId (default 1) is the first ID to
// issue, step (default 1000) the row's step. Blanks around items are
// ignored; "" is an empty list.
func ParseTags(list string) ([]TagInfo, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var tags []TagInfo
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

func parseTag(item string) (TagInfo, error) {
	parts := strings.Split(item, ":")
	if len(parts) > 3 {
		return TagInfo{}, fmt.Errorf("%w: want tag[:initialMaxId[:step]]", intf.ErrInvalidArgument)
	}
	t := TagInfo{Tag: parts[0], MaxId: DefaultInitialMaxId, Step: DefaultTagStep}
	for i, dst := range []*int64{&t.MaxId, &t.Step} {
		if len(parts) <= i+1 {
			break
		}
		n, err := strconv.ParseInt(strings.TrimSpace(parts[i+1]), 10, 64)
		if err != nil {
			return TagInfo{}, fmt.Errorf("%w: %q is not an integer", intf.ErrInvalidArgument, parts[i+1])
		}
		*dst = n
	}
	return t, t.Validate()
}

// EnsureTags creates the tags that do not exist yet and leaves existing
// ones as they are. It returns the names it created.
func EnsureTags(ctx context.Context, st Store, tags []TagInfo) ([]string, error) {
	var created []string
	for _, t := range tags {
		err := st.CreateTag(ctx, t)
		switch {
		case err == nil:
			created = append(created, t.Tag)
		case !errors.Is(err, ErrTagExists):
			return created, err
		}
	}
	return created, nil
}
