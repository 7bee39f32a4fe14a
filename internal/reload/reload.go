// Package reload re-reads files that configure a running server — TLS
// certificates, the auth file — when their content changes or on SIGHUP,
// without a restart: Digest tells a Reloader whether its files changed,
// Watch drives every Reloader of a program.
package reload

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
	"time"
)

// Reloader is configuration read from files and put in force again on
// Reload. A failed reload leaves the old one in force.
type Reloader interface {
	// Reload re-reads the files and puts their content in force when it
	// changed since the last Reload (or when force is set); changed says
	// it did.
	Reload(force bool) (changed bool, err error)
	// Name names it in the log, e.g. "auth file /etc/vesta/auth.yaml".
	Name() string
}

// Digest remembers the content of some files last seen, so that a
// Reloader parses them again only when they changed. Content, not a
// modification time: a file rewritten within the same second, or swapped
// by a symlink (Kubernetes secrets), is seen all the same.
type Digest struct {
	last [sha256.Size]byte
	seen bool
}

// Read reads the files; changed says their content differs from the last
// Read's (always true the first time). Reading a few small files is cheap
// enough to do every second.
func (d *Digest) Read(paths ...string) (data [][]byte, changed bool, err error) {
	h := sha256.New()
	for _, p := range paths {
		b, err := ReadFile(p)
		if err != nil {
			return nil, false, err
		}
		data = append(data, b)
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	changed = !d.seen || sum != d.last
	d.last, d.seen = sum, true
	return data, changed, nil
}

// MaxFileBytes bounds a configuration file read: certificates and auth
// files are kilobytes.
const MaxFileBytes = 4 << 20

// ReadFile reads a configuration file that must be a regular file of at
// most MaxFileBytes. A FIFO, a device (a symlink to /dev/zero) or a huge
// file is an error, never a read that blocks or fills memory: it is opened
// without blocking and checked on the descriptor it is read from.
func ReadFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("not a regular file (%s)", st.Mode().Type())}
	case st.Size() > MaxFileBytes:
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%d bytes, more than the %d a configuration file may have", st.Size(), MaxFileBytes)}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err == nil && len(b) > MaxFileBytes {
		err = &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("more than the %d bytes a configuration file may have", MaxFileBytes)}
	}
	return b, err
}

// DefaultInterval is how often Watch looks at the files.
const DefaultInterval = time.Second

// Watch reloads every r each interval (interval <= 0: only on a signal),
// and with force whenever hup delivers a signal (SIGHUP), until ctx ends.
// It logs each reload that put something new in force, and each failure
// once until it changes or a signal asks again: a broken file left in
// place is not a log line a second.
func Watch(ctx context.Context, interval time.Duration, hup <-chan os.Signal, log *slog.Logger, rs ...Reloader) {
	if len(rs) == 0 {
		return
	}
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	lastErr := make([]string, len(rs))
	for {
		force := false
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-hup:
			force = true
			log.Info("vesta: SIGHUP: reloading", "what", len(rs))
		}
		for i, r := range rs {
			changed, err := r.Reload(force)
			switch {
			case err != nil:
				if msg := err.Error(); force || msg != lastErr[i] {
					lastErr[i] = msg
					log.Error("vesta: reload failed; the previous one stays in force", "what", r.Name(), "err", err)
				}
			case changed:
				lastErr[i] = ""
				log.Info("vesta: reloaded", "what", r.Name())
			default:
				lastErr[i] = ""
			}
		}
	}
}
