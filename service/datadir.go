package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// ErrDataDirLocked: another process holds the data directory.
var ErrDataDirLocked = errors.New("data dir is locked by another process")

// ErrCorruptMark: the high-water mark file in the data dir does not hold a
// time. New refuses to start rather than guess how far ahead IDs went.
var ErrCorruptMark = errors.New("high-water mark is corrupt")

// ErrMarkMissing: the data dir shows it was used before (a marker, a copy
// of the mark, a lock file of an earlier version), but its high-water mark
// is gone. New refuses to start: the IDs issued from it can no longer be
// bounded, and a start in the same second would repeat them.
// Settings.ResetDataDir accepts the dir once the clock is surely past them.
var ErrMarkMissing = errors.New("high-water mark is missing from a data dir used before")

// Files of the data dir. The mark is kept twice, written one after the
// other: a mark lowered by hand (or restored from a backup) is noticed by
// the copy, and the higher of the two is taken. The marker is written once,
// before the first mark, and never removed while the dir holds a mark: with
// it a mark that disappeared is refused instead of taken as a first start.
const (
	markFileName   = "highwater"
	copyFileName   = "highwater.prev"
	markerFileName = "vesta.used"
	// oldLockName is the lock file of earlier versions: a trace of a run.
	oldLockName = "vesta.lock"
)

const markerText = "This directory holds the time high-water mark of a vesta-go ID service (highwater, highwater.prev).\n" +
	"Do not remove the mark: a restart without it could repeat IDs. A missing mark is refused at start;\n" +
	"reset it (resetDataDir, --reset-data-dir) only once the clock is surely past the last IDs issued from here.\n"

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

	// fresh: the dir held no trace of a run when it was opened.
	fresh bool
	// marked: the marker is known to be on disk (read by the lease's
	// goroutine through writeLeaseState).
	marked atomic.Bool
	// stateMu orders writeLeaseState and removeMark: a state written
	// after the mark was removed would leave a trace without a mark.
	stateMu sync.Mutex
	// lastMs is the last mark written (or read) in this run: a lower one
	// (Close's exact mark) writes the copy first, so that a crash never
	// leaves the copy above the mark and a false "lowered" warning.
	lastMs int64
	// keepMs is what removeMark leaves in a dir used before: the mark
	// found at start, or the time the start waited to (set by openMark).
	keepMs int64
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

func (d *dataDir) copyPath() string   { return filepath.Join(d.path, copyFileName) }
func (d *dataDir) markerPath() string { return filepath.Join(d.path, markerFileName) }

// markFile is what one mark file holds: absent, a mark, or an error
// (unreadable, not a number, a dangling symlink).
type markFile struct {
	path    string
	present bool
	ms      int64
	err     error
}

func (f markFile) ok() bool { return f.present && f.err == nil }

func readMarkFile(path string) markFile {
	f := markFile{path: path}
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return f
	}
	f.present = true
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		target, _ := os.Readlink(path)
		f.err = fmt.Errorf("%w: %s is a symlink to %q, which does not exist", ErrCorruptMark, path, target)
	case err != nil:
		f.err = fmt.Errorf("%w: %s cannot be read: %w", ErrCorruptMark, path, err)
	default:
		if f.ms, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil {
			f.err = fmt.Errorf("%w: %s holds %q", ErrCorruptMark, path, b)
		}
	}
	return f
}

// storedMark is what the data dir says about the IDs issued from it.
type storedMark struct {
	ms    int64 // the mark to honour (Unix ms); valid when ok
	ok    bool
	where string // the file it came from
	// warn, when set, is logged: the mark was lowered, or reset.
	warn string
}

// readMark returns the mark to honour. It refuses a dir that was used
// before but has no readable mark (ErrMarkMissing, ErrCorruptMark),
// unless reset is set; reset is refused when there is nothing to reset.
// A mark below its copy (lowered by hand, or restored from a backup) is
// raised to the copy, with a warning.
func (d *dataDir) readMark(reset bool) (storedMark, error) {
	mark, cp := readMarkFile(d.markPath()), readMarkFile(d.copyPath())
	traces := d.traces()
	d.fresh = !mark.present && len(traces) == 0
	fix := "restore it, or — only once the clock is surely past the last IDs issued from this dir — start once with resetDataDir (--reset-data-dir)"
	if cp.ok() && !mark.ok() {
		fix = fmt.Sprintf("restore it from its copy (cp %s %s: it holds %d, %s), or — only once the clock is surely past the last IDs issued from this dir — start once with resetDataDir (--reset-data-dir)",
			cp.path, mark.path, cp.ms, time.UnixMilli(cp.ms).UTC().Format(time.RFC3339))
	}
	switch {
	case mark.ok() && reset:
		return storedMark{}, fmt.Errorf("%w: resetDataDir is set, but %s holds a readable high-water mark: there is nothing to reset. Remove the setting (left on, it would hide a mark lost later)",
			intf.ErrInvalidArgument, mark.path)
	case mark.ok():
		if cp.present && cp.err != nil {
			return storedMark{}, fmt.Errorf("the copy of the high-water mark: %w: restore it from %s (cp %s %s) once you are sure that one is not lowered",
				cp.err, mark.path, mark.path, cp.path)
		}
		m := storedMark{ms: mark.ms, ok: true, where: mark.path}
		if cp.ok() && cp.ms > mark.ms {
			m = storedMark{ms: cp.ms, ok: true, where: cp.path, warn: fmt.Sprintf(
				"vesta: the high-water mark %s (%d) is below its copy %s (%d): it was lowered or restored from a backup; the higher one counts",
				mark.path, mark.ms, cp.path, cp.ms)}
		}
		d.lastMs = m.ms
		return m, nil
	case !reset && mark.present:
		return storedMark{}, fmt.Errorf("%w: %s", mark.err, fix)
	case !reset && !d.fresh:
		return storedMark{}, fmt.Errorf("%w: %s was used before (%s) but has no high-water mark %s: a start now could repeat the IDs issued from it. %s",
			ErrMarkMissing, d.path, strings.Join(traces, ", "), mark.path, fix)
	case reset && d.fresh:
		return storedMark{}, fmt.Errorf("%w: resetDataDir is set, but %s was never used: there is nothing to reset. Remove the setting",
			intf.ErrInvalidArgument, d.path)
	case reset:
		// The operator vouches for the clock. A readable copy still
		// bounds: a reset never goes below what is known.
		m := storedMark{warn: fmt.Sprintf("vesta: resetDataDir: accepting %s without a readable high-water mark; remove the setting now", d.path)}
		if cp.ok() {
			m.ms, m.ok, m.where = cp.ms, true, cp.path
			d.lastMs = cp.ms
		}
		return m, nil
	}
	return storedMark{}, nil // a first start
}

// traces lists what shows the dir was used by a run, the mark aside. The
// segment store's file does not count: it is created before the service
// starts.
func (d *dataDir) traces() []string {
	var found []string
	for _, name := range []string{markerFileName, copyFileName, markFileName + ".tmp", copyFileName + ".tmp", oldLockName, leaseStateFileName} {
		if _, err := os.Lstat(filepath.Join(d.path, name)); !errors.Is(err, os.ErrNotExist) {
			found = append(found, name)
		}
	}
	return found
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

// writeMark stores ms durably in the mark and its copy: for each, write
// a temporary file, fsync it and rename it over; then fsync the directory.
// The marker goes first, once.
func (d *dataDir) writeMark(ms int64) error {
	// Never write into a directory that replaced ours: another process
	// may hold it, and its mark is its own.
	if err := d.check(); err != nil {
		return fmt.Errorf("high-water mark %s not written: %w", d.markPath(), err)
	}
	if !d.marked.Load() {
		if err := d.writeMarker(); err != nil {
			return err
		}
	}
	// Raising, the mark goes first; lowering (Close), the copy: a crash
	// in between leaves the mark at or above its copy either way, and
	// the higher of the two covers every ID issued.
	first, second := d.markPath(), d.copyPath()
	if ms < d.lastMs {
		first, second = second, first
	}
	text := strconv.FormatInt(ms, 10) + "\n"
	err := writeFileSynced(first, text)
	if err == nil {
		err = writeFileSynced(second, text)
	}
	if err == nil {
		err = syncDir(d.path)
	}
	if err != nil {
		return fmt.Errorf("high-water mark: %w", err)
	}
	d.lastMs = ms
	return nil
}

// writeMarker stores the marker that the dir has been used, durably,
// before the first mark.
func (d *dataDir) writeMarker() error {
	if _, err := os.Stat(d.markerPath()); err != nil {
		if err := writeFileSynced(d.markerPath(), markerText); err != nil {
			return fmt.Errorf("data dir marker: %w", err)
		}
		if err := syncDir(d.path); err != nil {
			return fmt.Errorf("data dir marker: %w", err)
		}
	}
	d.marked.Store(true)
	return nil
}

// writeFileSynced replaces path with text: a temporary file, fsynced,
// renamed over it. The caller fsyncs the directory.
func writeFileSynced(path, text string) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	return err
}

// removeMark is called by a Close when the run issued nothing. A dir that
// was fresh is left as it was found (so a quick restart need not wait out
// the mark stored ahead, and still counts as a first start); a dir used
// before keeps a mark — the one found at start or the time the start
// waited to — since removing it would make the next start refuse it.
func (d *dataDir) removeMark() error {
	d.stateMu.Lock()
	defer d.stateMu.Unlock()
	if !d.fresh {
		return d.writeMark(d.keepMs)
	}
	for _, p := range []string{d.markPath(), d.copyPath(), d.markerPath(), d.leaseStatePath()} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("high-water mark: %w", err)
		}
	}
	if err := syncDir(d.path); err != nil {
		return fmt.Errorf("high-water mark: %w", err)
	}
	d.marked.Store(false)
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
