package segopen

import (
	"errors"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// ErrStoreUnavailable is what the caller of a segment call reads when the
// segment store failed it: unreachable, failing, too slow, or being
// retried. The failure's own text stays in the server's log: it may name
// the database's address, its user or a file of the server, which are no
// business of a client holding only a segment:<tag> scope.
var ErrStoreUnavailable = errors.New("segment store unavailable")

// StoreError is a store's failure as the caller of a segment call sees
// it: its text is ErrStoreUnavailable's, and it matches that and
// intf.ErrUnavailable (so a client tries another server), never the
// failure itself. Cause is the failure, for the server's own use.
type StoreError struct {
	Cause error
}

func (e *StoreError) Error() string { return ErrStoreUnavailable.Error() + ": retry shortly" }

// Unwrap leaves the cause out, so that no answer built from the error
// (its text, or what errors.As finds in it) can show it.
func (e *StoreError) Unwrap() []error { return []error{ErrStoreUnavailable, intf.ErrUnavailable} }

// CallerError is err, an error of a segment call or of Get, as its caller
// may read it: a failure of the store — any error matching
// intf.ErrUnavailable but ErrNotOpen, a *DownError included — becomes a
// *StoreError; every other error (a tag unknown or malformed, an argument
// out of range, a tag used up, a cancelled call, ErrOff) is returned as
// it is. The cause of a failure is logged as a warning, at most once
// every 10 s with how many it stands for (a *DownError is logged already,
// when the mode records it). Both servers answer segment calls through
// it, so the rule is the same on both doors.
func (m *Mode[S]) CallerError(err error) error {
	if err == nil || !errors.Is(err, intf.ErrUnavailable) || errors.Is(err, ErrNotOpen) {
		return err
	}
	var se *StoreError
	if errors.As(err, &se) {
		return err
	}
	var down *DownError
	if !errors.As(err, &down) {
		if ok, suppressed := m.storeLog.Allow(time.Now()); ok {
			m.log.Warn("vesta: a segment call failed on the store: the caller is told "+ErrStoreUnavailable.Error(),
				"err", err, "notLogged", suppressed)
		}
	}
	return &StoreError{Cause: err}
}
