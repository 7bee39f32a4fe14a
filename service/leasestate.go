package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// leaseStateFileName holds what a MachineLease keeps across restarts
// (LeaseHolder.SaveLeaseState), beside the mark it depends on.
const leaseStateFileName = "lease.state"

func (d *dataDir) leaseStatePath() string { return filepath.Join(d.path, leaseStateFileName) }

// readLeaseState returns the saved lease state. It is trusted only with
// the mark it was saved beside: after a reset (the mark lost) the file is
// removed, as a lease resumed on it would rely on a mark that is gone.
func (d *dataDir) readLeaseState(markOK, reset bool) ([]byte, error) {
	if reset || !markOK {
		if err := os.Remove(d.leaseStatePath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("lease state: %w", err)
		}
		return nil, nil
	}
	b, err := os.ReadFile(d.leaseStatePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lease state: %w", err)
	}
	return b, nil
}

// writeLeaseState stores b durably (nil removes the file). Nothing is
// written once the mark was removed (a Close of a run that issued
// nothing leaves a fresh dir as it found it).
func (d *dataDir) writeLeaseState(b []byte) error {
	if err := d.check(); err != nil {
		return fmt.Errorf("lease state not written: %w", err)
	}
	d.stateMu.Lock()
	defer d.stateMu.Unlock()
	if !d.marked.Load() {
		return nil
	}
	var err error
	if b == nil {
		if err = os.Remove(d.leaseStatePath()); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	} else {
		err = writeFileSynced(d.leaseStatePath(), string(b))
	}
	if err == nil {
		err = syncDir(d.path)
	}
	if err != nil {
		return fmt.Errorf("lease state: %w", err)
	}
	return nil
}
