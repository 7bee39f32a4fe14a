package segtest

import (
	"context"

	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Open creates the tags missing from st and starts a Generator on it, as
// stores.Open does on a database: for the tests of the light module, which
// links no database driver. Several generators on one Mem are nodes that
// share one database (a Mem outlives its generators' Close).
func Open(ctx context.Context, st segstore.Store, tags []segspec.Tag, s segment.Settings) (*segment.Generator, error) {
	if _, err := segstore.EnsureTags(ctx, st, tags); err != nil {
		return nil, err
	}
	s.Store = st
	return segment.New(ctx, s)
}
