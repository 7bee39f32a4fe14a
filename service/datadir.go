package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrDataDirLocked: another process holds the data directory.
var ErrDataDirLocked = errors.New("data dir is locked by another process")

// ErrCorruptMark: the high-water mark file in the data dir does not hold a
// time. New refuses to start rather than guess how far ahead IDs went.
var ErrCorruptMark = errors.New("high-water mark is corrupt")

const markFileName = "highwater"

// ErrDataDirLost: the data directory was removed or replaced while this
// process held it. Issuing stops: the marks written since went to a
// directory another process may now hold.
var ErrDataDirLost = errors.New("data dir was removed or replaced while in use")

// dataDir is a locked directory holding the time high-water mark.
//
// The lock is taken on the directory itself, not on a file in it: a lock
// file can be deleted while held, and a second process would then lock a
// new file and issue beside the first. The directory can still be removed
// or renamed as a whole; check tells, and the service then stops issuing.
type dataDir struct {
	path string
	lock *os.File // the directory, opened and flocked
}

// openDataDir creates dir if needed and locks it for this process.
func openDataDir(dir string) (*dataDir, error) {
	created := missingDirs(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	// A directory just created is durable only once its parent's entry
	// is: else a power loss could take the dir, and the mark in it.
	for _, d := range created {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s (%v): is another vesta-go running with the same dataDir?", ErrDataDirLocked, dir, err)
	}
	d := &dataDir{path: dir, lock: f}
	if err := d.check(); err != nil { // replaced between MkdirAll and Open
		d.close()
		return nil, err
	}
	return d, nil
}

// check fails with ErrDataDirLost when the path no longer names the
// directory this process locked.
func (d *dataDir) check() error {
	held, err := d.lock.Stat()
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrDataDirLost, d.path, err)
	}
	now, err := os.Stat(d.path)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrDataDirLost, d.path, err)
	}
	if !os.SameFile(held, now) {
		return fmt.Errorf("%w: %s is another directory now", ErrDataDirLost, d.path)
	}
	return nil
}

func (d *dataDir) markPath() string { return filepath.Join(d.path, markFileName) }

// readMark returns the stored mark in Unix milliseconds; ok is false when
// none was ever written.
func (d *dataDir) readMark() (ms int64, ok bool, err error) {
	b, err := os.ReadFile(d.markPath())
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("high-water mark: %w", err)
	}
	ms, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %s holds %q: restore it or remove it once the clock is surely past the last IDs issued", ErrCorruptMark, d.markPath(), b)
	}
	return ms, true, nil
}

// missingDirs lists dir and those of its ancestors that do not exist yet,
// the deepest first.
func missingDirs(dir string) []string {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			return missing
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			return missing
		}
	}
}

// writeMark stores ms durably: write a temporary file, fsync it, rename it
// over the mark and fsync the directory.
func (d *dataDir) writeMark(ms int64) error {
	// Never write into a directory that replaced ours: another process
	// may hold it, and its mark is its own.
	if err := d.check(); err != nil {
		return fmt.Errorf("high-water mark %s not written: %w", d.markPath(), err)
	}
	tmp := d.markPath() + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("high-water mark: %w", err)
	}
	_, err = f.WriteString(strconv.FormatInt(ms, 10) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, d.markPath())
	}
	if err == nil {
		err = syncDir(d.path)
	}
	if err != nil {
		return fmt.Errorf("high-water mark: %w", err)
	}
	return nil
}

// removeMark deletes the mark durably.
func (d *dataDir) removeMark() error {
	if err := os.Remove(d.markPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("high-water mark: %w", err)
	}
	if err := syncDir(d.path); err != nil {
		return fmt.Errorf("high-water mark: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func (d *dataDir) close() error {
	unlockFile(d.lock)
	return d.lock.Close()
}
