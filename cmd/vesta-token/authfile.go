package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/vesta-go/vesta/internal/access/authfile"
)

// authFileHeader starts an auth file that vesta-token creates.
const authFileHeader = "# vesta-go auth file (docs/security.md): one entry per client, holding its token's SHA-256\nclients:\n"

// authFileEdit is the client's entry to write into an auth file: a new
// file with the header, or appended to an existing one.
type authFileEdit struct {
	path    string
	create  bool
	content []byte // the whole file (create) or the bytes to append
}

// planAuthFile reads the auth file at path, if any, and returns the edit
// that adds entry (the entry's lines, under clients:). Nothing is written
// yet, so that a file the entry cannot join stops the command before the
// token exists anywhere. The result must be a valid auth file whose last
// client is the new one: a file that is broken, or whose clients list is
// not the last thing in it (a flow list, a key after it), is left to the
// user.
func planAuthFile(path, entry string) (*authFileEdit, error) {
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		edit := &authFileEdit{path: path, create: true, content: []byte(authFileHeader + entry)}
		if _, err := authfile.Parse(path, edit.content); err != nil {
			return nil, err
		}
		return edit, nil
	}
	if err != nil {
		return nil, err
	}
	before, err := authfile.Parse(path, old)
	if err != nil {
		return nil, fmt.Errorf("%w (fix it, then add the client again)", err)
	}
	add := entry
	if len(old) > 0 && old[len(old)-1] != '\n' {
		add = "\n" + entry
	}
	after, err := authfile.Parse(path, append(old[:len(old):len(old)], add...))
	if err != nil {
		return nil, fmt.Errorf("%w, with the entry appended at its end", err) // a name already there; a flow list
	}
	if len(after.Clients()) != len(before.Clients())+1 {
		return nil, fmt.Errorf("%s: the entry cannot be appended to this file's clients list: add it by hand", path)
	}
	return &authFileEdit{path: path, content: []byte(add)}, nil
}

// write makes the edit: a new file of mode 0600 (never replacing one made
// meanwhile), or one write appending to the existing file, which keeps
// its mode, owner and links.
func (e *authFileEdit) write() error {
	flag := os.O_WRONLY | os.O_APPEND
	if e.create {
		flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(e.path, flag, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(e.content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
