package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

// The hashes modsum writes are the ones the go command computes from the
// tagged tree (x/mod/zip.CreateFromVCS), for the root module and for a
// nested one (which takes the repository's LICENSE).
func TestSumMatchesTheZipOfTheCommit(t *testing.T) {
	for _, rel := range []string{"../..", "../../service/backend", "../../server-rest"} {
		dir, err := filepath.Abs(rel)
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := exec.Command("git", "-C", dir, "status", "--porcelain", "--", ".").Output(); len(out) > 0 {
			t.Skipf("%s has uncommitted changes: the commit's zip differs from the working tree's", rel)
		}
		got, err := sum(dir, "v1.2.3")
		if err != nil {
			t.Fatal(err)
		}
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		top, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output()
		if err != nil {
			t.Fatal(err)
		}
		root := strings.TrimSpace(string(top))
		sub, _ := filepath.Rel(root, dir)
		if sub == "." {
			sub = ""
		}
		path := modfile.ModulePath(gomod)
		f, err := os.CreateTemp(t.TempDir(), "*.zip")
		if err != nil {
			t.Fatal(err)
		}
		if err := zip.CreateFromVCS(f, module.Version{Path: path, Version: "v1.2.3"}, root, "HEAD", sub); err != nil {
			t.Fatal(err)
		}
		f.Close()
		want, err := dirhash.HashZip(f.Name(), dirhash.Hash1)
		if err != nil {
			t.Fatal(err)
		}
		modHash, _ := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gomod)), nil })
		wantLines := path + " v1.2.3 " + want + "\n" + path + " v1.2.3/go.mod " + modHash + "\n"
		if got != wantLines {
			t.Errorf("%s:\nmodsum: %s\ngo:     %s", rel, got, wantLines)
		}
	}
}
