package segstore

import (
	"context"
	"errors"

	"github.com/vesta-go/vesta/service/segment/segspec"
)

// EnsureTags creates the tags that do not exist yet (a list read by
// segspec.ParseTags, say) and leaves existing ones as they are. It
// returns the names it created.
func EnsureTags(ctx context.Context, st Store, tags []segspec.Tag) ([]string, error) {
	var created []string
	for _, t := range tags {
		err := st.CreateTag(ctx, TagInfo{Tag: t.Tag, MaxId: t.MaxId, Step: t.Step})
		switch {
		case err == nil:
			created = append(created, t.Tag)
		case !errors.Is(err, ErrTagExists):
			return created, err
		}
	}
	return created, nil
}
