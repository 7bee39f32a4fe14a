package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// initdbArgs are the arguments of the one initdb every server's data
// directory comes from.
var initdbArgs = []string{"-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"}

// initData fills s.data with a fresh cluster. initdb takes 1-4 s (most of a
// test package's PostgreSQL start), so it runs once per installation into
// a template under os.TempDir, which each server copies (cp -a, a fraction
// of that). When there is no template to be had or the copy fails, it
// runs initdb in place.
func (s *Server) initData(ctx context.Context) error {
	if tmpl, err := s.template(ctx); err == nil {
		if err := exec.CommandContext(ctx, "cp", "-a", tmpl, s.data).Run(); err == nil {
			return nil
		}
		_ = os.RemoveAll(s.data)
	}
	_, err := s.run(ctx, "initdb", append([]string{"-D", s.data}, initdbArgs...)...)
	return err
}

// template returns the template data directory of s's installation,
// making it on first use. It is named by the initdb binary (path, size,
// time) and its arguments, and appears whole (a rename) or not at all;
// two processes that make it at once both succeed, one rename wins.
func (s *Server) template(ctx context.Context) (string, error) {
	fi, err := os.Stat(filepath.Join(s.bin, "initdb"))
	if err != nil {
		return "", err
	}
	key := sha256.Sum256([]byte(strings.Join(append([]string{s.bin, fi.ModTime().String(),
		strconv.FormatInt(fi.Size(), 10), s.runAs}, initdbArgs...), "\x00")))
	root := filepath.Join(os.TempDir(), fmt.Sprintf("vesta-pgtemplate-%d", os.Getuid()))
	final := filepath.Join(root, hex.EncodeToString(key[:8]))
	if _, err := os.Stat(filepath.Join(final, "PG_VERSION")); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, "initdb-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if s.runAs != "" { // initdb runs as the postgres user: give it the way in
		u, err := user.Lookup(s.runAs)
		if err != nil {
			return "", err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		for _, p := range []string{root, tmp} {
			if err := os.Chown(p, uid, gid); err != nil {
				return "", err
			}
		}
	}
	data := filepath.Join(tmp, "data")
	if _, err := s.run(ctx, "initdb", append([]string{"-D", data}, initdbArgs...)...); err != nil {
		return "", err
	}
	if err := os.Rename(data, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, "PG_VERSION")); serr == nil {
			return final, nil // another process made it first
		}
		return "", err
	}
	return final, nil
}
