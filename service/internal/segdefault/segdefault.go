// Package segdefault holds the defaults of segment.Settings: segment.New
// applies them to zero fields, and stores.Open reads LoadTimeout (it opens
// a store within three of them). The fields' comments in segment.Settings
// state each value; a test of package segment keeps them in step.
package segdefault

import "time"

const (
	// MaxStep caps the dynamic step, as Leaf does.
	MaxStep = 1_000_000
	// RefreshInterval is how often the tag list is reread.
	RefreshInterval = 60 * time.Second
	// LoadTimeout bounds one database call.
	LoadTimeout = 5 * time.Second
	// WaitTimeout bounds how long a request waits for a range that is
	// being loaded when both buffers are used up.
	WaitTimeout = 500 * time.Millisecond
	// RetryInterval is the least time between two failed loads of one tag.
	RetryInterval = time.Second
	// MissRefreshInterval is the least time between two rereads of the tag
	// list caused by requests for a tag the Generator does not know.
	MissRefreshInterval = time.Second
)
