package service

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// leaseStateFileName holds what a machineid.Lease keeps across restarts
// (machineid.Holder.SaveLeaseState), beside the mark it depends on.
const leaseStateFileName = "lease.state"

func (d *dataDir) leaseStatePath() string { return filepath.Join(d.path, leaseStateFileName) }

// leaseStateHeader starts the file: it names the directory (device and
// inode, dirIdentity) the state was saved in.
const leaseStateHeader = "vesta lease state, dir "

// readLeaseState returns the saved lease state. It is trusted only with
// the mark it was saved beside: after a reset (the mark lost) the file is
// removed, as a lease resumed on it would rely on a mark that is gone. And
// only in the directory it was saved in: a copy of a data dir (another
// instance started from it while the original runs) must not resume the
// original's lease — warn says so.
func (d *dataDir) readLeaseState(markOK, reset bool) (state []byte, warn string, err error) {
	if reset || !markOK {
		if err := os.Remove(d.leaseStatePath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("lease state: %w", err)
		}
		return nil, "", nil
	}
	b, err := os.ReadFile(d.leaseStatePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("lease state: %w", err)
	}
	head, body, _ := bytes.Cut(b, []byte("\n"))
	saved, ok := bytes.CutPrefix(head, []byte(leaseStateHeader))
	if id := dirIdentity(d.lock); !ok || id == "" || string(saved) != id {
		return nil, fmt.Sprintf("vesta: %s was saved in another directory (%q, this one is %q): a copied data dir does not resume the lease of its original; the lease will claim a machine id anew",
			d.leaseStatePath(), saved, id), nil
	}
	return body, "", nil
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
		err = writeFileSynced(d.leaseStatePath(), leaseStateHeader+dirIdentity(d.lock)+"\n"+string(b))
	}
	if err == nil {
		err = syncDir(d.path)
	}
	if err != nil {
		return fmt.Errorf("lease state: %w", err)
	}
	return nil
}
