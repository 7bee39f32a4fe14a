package access_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
)

// Any Authorization header: a token or an unauthenticated error, never a
// panic, and the error never quotes what was sent.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer vesta_abc", "bearer  x==", "Basic abc", "Bearer", "Bearer a b", "Bearer a\x00",
		"Bearer =", strings.Repeat("B", 5000), "Bearer é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		token, err := access.BearerToken([]string{header})
		if err != nil {
			if !errors.Is(err, intf.ErrUnauthenticated) || access.ReasonOf(err) == "" {
				t.Fatalf("%q: %v is not an unauthenticated refusal with a reason", header, err)
			}
			if token != "" {
				t.Fatalf("%q: a token with an error", header)
			}
			if rest := strings.TrimSpace(header); len(rest) >= 7+12 && strings.Contains(err.Error(), rest[7:]) { // 12+ bytes: not by chance
				t.Fatalf("%q: the error quotes the header: %v", header, err)
			}
			return
		}
		if access.CheckToken(token) != nil || !strings.HasSuffix(header, token) {
			t.Fatalf("%q: token %q", header, token)
		}
	})
}
