package authfile_test

import (
	"errors"
	"testing"

	"github.com/vesta-go/vesta/internal/access/authfile"
)

// Any file: a policy or an *authfile.Error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good()))
	f.Add([]byte("clients: []\n"))
	f.Add([]byte("clients:\n  - name: a\n    tokenSHA256: [x, {y: 1}]\n    rate: .inf\n"))
	f.Add([]byte("clients: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := authfile.Parse("fuzz.yaml", data)
		var fe *authfile.Error
		switch {
		case err == nil && p == nil:
			t.Fatal("no policy and no error")
		case err != nil && !errors.As(err, &fe):
			t.Fatalf("%T is not an *authfile.Error: %v", err, err)
		}
	})
}
