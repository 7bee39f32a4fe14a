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

const (
	lockFileName = "vesta.lock"
	markFileName = "highwater"
)

// dataDir is a locked directory holding the time high-water mark.
type dataDir struct {
	path string
	lock *os.File
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
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s (%v): is another vesta-go running with the same dataDir?", ErrDataDirLocked, dir, err)
	}
	return &dataDir{path: dir, lock: f}, nil
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
