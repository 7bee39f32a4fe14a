package access

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math"
)

// Client is one client of an auth file.
type Client struct {
	// Name shows in logs and as the metrics' client label: 1..64 ASCII
	// letters, digits, '.', '_' and '-', unique in the file.
	Name string
	// Tokens are the SHA-256 digests of the client's tokens: one, or
	// two while a token is being rotated. A digest belongs to one client.
	Tokens [][32]byte
	// Scopes are what the client may do; see Scope.
	Scopes []Scope
	// Rate is the IDs per second the client may take; 0 means no limit.
	Rate float64
	// Burst is the IDs above the rate it may take at once; 0 with a Rate
	// means one second's worth (the Rate rounded up). Not without a Rate.
	Burst int64
}

// MaxRate bounds Client.Rate: far above what one machine id can issue
// (2^20 IDs per second), low enough to keep the arithmetic exact.
const MaxRate = 1e9

// ClientError is a client that NewPolicy refuses: Index is its place in
// the list (the auth file's reader turns it into a line), Field the
// field at fault.
type ClientError struct {
	Index int
	Name  string
	Field string
	Msg   string
}

func (e *ClientError) Error() string {
	who := fmt.Sprintf("client %d", e.Index+1)
	if e.Name != "" {
		who += fmt.Sprintf(" (%s)", e.Name)
	}
	return fmt.Sprintf("%s: %s: %s", who, e.Field, e.Msg)
}

// Policy is a validated list of clients. It is immutable; a Guard serves
// one at a time.
type Policy struct {
	clients []Client
	// entries holds one digest per token; index finds a digest's entry
	// by its keyed hash (see find).
	entries []entry
	index   map[[32]byte]int
	key     [32]byte
}

type entry struct {
	sum    [32]byte
	client int // index in clients
}

// NewPolicy validates clients into a Policy. An empty list is a policy
// too: every call is refused until a reload brings clients.
func NewPolicy(clients []Client) (*Policy, error) {
	p := &Policy{clients: make([]Client, len(clients)), index: map[[32]byte]int{}}
	if _, err := rand.Read(p.key[:]); err != nil {
		return nil, fmt.Errorf("access: reading random bytes: %w", err)
	}
	names := map[string]int{}
	owner := map[[32]byte]int{}
	for i, c := range clients {
		fail := func(field, format string, a ...any) error {
			return &ClientError{Index: i, Name: c.Name, Field: field, Msg: fmt.Sprintf(format, a...)}
		}
		if !validName(c.Name) {
			name := c.Name
			c.Name = "" // not quoted raw in the error's prefix; the message says what is wrong
			return nil, fail("name", "%q: want 1..64 ASCII letters, digits, '.', '_' and '-'", clip(name))
		}
		if j, dup := names[c.Name]; dup {
			return nil, fail("name", "%q is also the name of client %d: names are unique", c.Name, j+1)
		}
		names[c.Name] = i
		if len(c.Tokens) == 0 {
			return nil, fail("tokenSHA256", "missing: the hex SHA-256 of the client's token (vesta-token prints it)")
		}
		for _, sum := range c.Tokens {
			if j, dup := owner[sum]; dup {
				return nil, fail("tokenSHA256", "%s… is also a token of client %d: a token belongs to one client",
					hex.EncodeToString(sum[:4]), j+1)
			}
			owner[sum] = i
			p.index[p.keyed(sum)] = len(p.entries)
			p.entries = append(p.entries, entry{sum: sum, client: i})
		}
		for _, s := range c.Scopes {
			if _, err := ParseScope(string(s)); err != nil {
				return nil, fail("scopes", "%v", err)
			}
		}
		if math.IsNaN(c.Rate) || c.Rate < 0 || c.Rate > MaxRate {
			return nil, fail("rate", "%v: want 0 (no limit) .. %g IDs per second", c.Rate, float64(MaxRate))
		}
		if c.Burst < 0 || c.Burst > MaxRate {
			return nil, fail("burst", "%d: want 0 .. %g IDs", c.Burst, float64(MaxRate))
		}
		if c.Rate == 0 && c.Burst != 0 {
			return nil, fail("burst", "%d without a rate: a burst is the IDs above the rate", c.Burst)
		}
		if c.Rate > 0 && c.Burst == 0 {
			c.Burst = int64(math.Ceil(c.Rate))
		}
		c.Tokens = append([][32]byte(nil), c.Tokens...)
		c.Scopes = append([]Scope(nil), c.Scopes...)
		p.clients[i] = c
	}
	return p, nil
}

// Clients returns the policy's clients (with their defaults filled in).
func (p *Policy) Clients() []Client { return append([]Client(nil), p.clients...) }

// find returns the index of the client owning the digest, or -1. The
// digest is looked up by its keyed hash — SHA-256 under the policy's
// random key, which no caller knows — so the map's timing depends on
// values a caller can neither choose nor learn anything from, and the
// entry found (or a dummy) is then confirmed with a constant-time
// comparison. It costs the same for 1 client as for 10,000.
func (p *Policy) find(sum [32]byte) int {
	i, ok := p.index[p.keyed(sum)]
	want := dummy
	if ok {
		want = p.entries[i].sum
	}
	if subtle.ConstantTimeCompare(want[:], sum[:]) != 1 || !ok {
		return -1
	}
	return p.entries[i].client
}

// dummy is compared with when no entry matched, so that a miss costs
// what a hit does.
var dummy [32]byte

// keyed is the index key of a digest: SHA-256 of the policy's key and the
// digest (fixed lengths: no extension to fear).
func (p *Policy) keyed(sum [32]byte) [32]byte {
	var b [64]byte
	copy(b[:32], p.key[:])
	copy(b[32:], sum[:])
	return sha256.Sum256(b[:])
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// clip bounds a value quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
