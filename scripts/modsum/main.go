// Command modsum prints the go.sum lines of modules of this repository at
// a version not yet published: the hash of each module's zip and of its
// go.mod, as the module proxy will serve them once the version is tagged.
// scripts/tag-release.sh writes them into the go.sum of every module that
// requires another, so that `go install …@VERSION` finds them complete.
//
//	go run ./scripts/modsum VERSION DIR...
//
// A module's files are those git will commit (tracked, or untracked and
// not ignored) under DIR, less the folders of nested modules: what the
// proxy takes from the tagged tree.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: modsum VERSION DIR...")
		os.Exit(2)
	}
	version := os.Args[1]
	for _, dir := range os.Args[2:] {
		lines, err := sum(dir, version)
		if err != nil {
			fmt.Fprintln(os.Stderr, "modsum:", err)
			os.Exit(1)
		}
		fmt.Print(lines)
	}
}

// sum returns the two go.sum lines of the module in dir at version.
func sum(dir, version string) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return "", fmt.Errorf("%s/go.mod names no module", dir)
	}
	files, err := moduleFiles(dir)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp("", "modsum-*.zip")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := zip.Create(tmp, module.Version{Path: path, Version: version}, files); err != nil {
		return "", fmt.Errorf("zip of %s: %w", path, err)
	}
	zipHash, err := dirhash.HashZip(tmp.Name(), dirhash.Hash1)
	if err != nil {
		return "", err
	}
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gomod)), nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", path, version, zipHash, path, version, modHash), nil
}

// moduleFiles lists the files git would commit under dir, leaving out
// every folder below dir that holds a go.mod of its own. A module in a
// subfolder without a LICENSE of its own gets the repository's, as the go
// command adds it to the zip it makes from a tag.
func moduleFiles(dir string) ([]zip.File, error) {
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", dir, err)
	}
	var names []string
	nested := map[string]bool{}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
			continue // deleted, not yet committed
		}
		names = append(names, name)
		if d := filepath.Dir(name); filepath.Base(name) == "go.mod" && d != "." {
			nested[d] = true
		}
	}
	var files []zip.File
	hasLicense := false
	for _, name := range names {
		if inNested(name, nested) {
			continue
		}
		hasLicense = hasLicense || name == "LICENSE"
		files = append(files, file{dir: dir, name: name})
	}
	top, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return nil, fmt.Errorf("git rev-parse in %s: %w", dir, err)
	}
	root := strings.TrimSpace(string(top))
	if abs, err := filepath.Abs(dir); err == nil && !hasLicense && abs != root {
		if _, err := os.Stat(filepath.Join(root, "LICENSE")); err == nil {
			files = append(files, file{dir: root, name: "LICENSE"})
		}
	}
	return files, nil
}

func inNested(name string, nested map[string]bool) bool {
	for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}

// file is one file of a module for zip.Create.
type file struct{ dir, name string }

func (f file) Path() string { return filepath.ToSlash(f.name) }
func (f file) Lstat() (os.FileInfo, error) {
	return os.Lstat(filepath.Join(f.dir, f.name))
}
func (f file) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.dir, f.name)) }
