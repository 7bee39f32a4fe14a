package segopen

import (
	"errors"

	"github.com/vesta-go/vesta/intf"
)

// Why Get finds no open segment mode, besides a *DownError: each server
// answers them in its protocol.
var (
	// ErrOff: segment mode is off by configuration.
	ErrOff = errors.New("segment mode is off")
	// ErrNotOpen: the first attempt at opening it has not ended yet. It
	// matches intf.ErrUnavailable.
	ErrNotOpen = errors.Join(errors.New("segment mode is not open"), intf.ErrUnavailable)
)

// Get returns segment mode when it is open, or why it is not: ErrOff, the
// *DownError of the store being retried, or ErrNotOpen. It is the one
// check both servers make before a segment call.
func (m *Mode[S]) Get() (S, error) {
	if s, ok := m.Open(); ok {
		return s, nil
	}
	var zero S
	switch {
	case m.Off():
		return zero, ErrOff
	case m.Down() != nil:
		return zero, m.Down()
	}
	return zero, ErrNotOpen
}
