package segment

import "github.com/vesta-go/vesta/service/segment/segstore"

// Store is where ranges come from; see segstore.Store.
type Store = segstore.Store

// TagInfo is one leaf_alloc row; see segstore.TagInfo.
type TagInfo = segstore.TagInfo

// Store errors, re-exported for callers of this package.
var (
	ErrTagExists     = segstore.ErrTagExists
	ErrMaxIDOverflow = segstore.ErrMaxIDOverflow
)
