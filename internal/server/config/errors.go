package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vesta-go/vesta/intf"
)

// ValueError is a value the loader refuses. It names the key, the value,
// where the value was set and what the key allows:
//
//	invalid argument: config key machine: "2000" from environment variable VESTA_MACHINE: want an integer 0..1023
//
// It matches intf.ErrInvalidArgument.
type ValueError struct {
	// Key is the key as written in a file, or Vesta's property name
	// (vesta.machine) when the value came from that.
	Key string
	// Value is the value as given; a secret's is never kept.
	Value string
	// Source is where the value was set; LayerDefault when nothing set it
	// (Value is then the default, or "" for a key that is required).
	Source Source
	// Want says what the key allows.
	Want string
}

func (e *ValueError) Error() string {
	var from string
	switch {
	case e.Source.Layer != LayerDefault:
		from = fmt.Sprintf("%q from %s", e.Value, e.Source)
	case e.Value == "":
		from = "not set"
	default:
		from = fmt.Sprintf("%q (the default)", e.Value)
	}
	return fmt.Sprintf("%v: config key %s: %s: want %s", intf.ErrInvalidArgument, e.Key, from, e.Want)
}

// Unwrap makes errors.Is(err, intf.ErrInvalidArgument) true.
func (e *ValueError) Unwrap() error { return intf.ErrInvalidArgument }

// newValueError refuses value of the key name, set at src; a secret's
// value is not kept.
func newValueError(name, value string, src Source, want string) *ValueError {
	if hidden, secret := secretKeys[name]; secret {
		value = hidden
	}
	return &ValueError{Key: name, Value: value, Source: src, Want: want}
}

// KeyError refuses value of key, a key c was loaded from, as Load refuses
// one: a *ValueError naming where the value was set (a secret's value is
// not kept). It is for what is checked after Load: internal/server/app validates
// the lease's options with the lease library, which the loader does not
// link, and names the key of a wrong one with it.
func (c Config) KeyError(key, value, want string) *ValueError {
	return newValueError(key, value, c.sources[key], want)
}

// secretKeys are the keys whose values no error shows, with what it
// shows instead. A DSN may hold a password (sqlite's path is shown no
// more than postgres's URL: a URL given with segmentStore sqlite is one).
var secretKeys = map[string]string{
	KeyEtcdPassword: "(not shown)",
	KeySegmentDSN:   "(not shown: it may hold a password)",
	KeyMachineDSN:   "(not shown: it may hold a password)",
}

// ErrUnknownKey is matched by every UnknownKeyError.
var ErrUnknownKey = errors.New("unknown configuration key")

// UnknownKeyError is a key in the config file, or a VESTA_* environment
// variable, that is no key of vesta-go: refused, so that a typo never
// leaves a default silently in force. It matches ErrUnknownKey and
// intf.ErrInvalidArgument.
type UnknownKeyError struct {
	// Name is the variable, or the file's key (in lower case: the file
	// formats' readers fold keys).
	Name string
	// Source is LayerEnv, or LayerFile with the file and the key's line.
	Source Source
	// Closest is the known variable or key nearest to Name.
	Closest string
	// Near says Closest is near enough to be what was meant.
	Near bool
}

func (e *UnknownKeyError) Error() string {
	hint := "no key is close to it (the closest is " + e.Closest + ")"
	if e.Near {
		hint = "did you mean " + e.Closest + "?"
	}
	name := e.Name
	if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		name = strconv.Quote(name)
	}
	if e.Source.Layer == LayerEnv {
		return fmt.Sprintf("environment variable %s is no vesta-go variable: %s Unset it; every VESTA_* variable is in docs/configuration.md",
			name, sentence(hint))
	}
	return fmt.Sprintf("config %s: unknown key %s: %s Every key is in docs/configuration.md", e.Source, name, sentence(hint))
}

// sentence ends a hint with a full stop unless it asks a question.
func sentence(s string) string {
	if strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// Is makes errors.Is match ErrUnknownKey and intf.ErrInvalidArgument.
func (e *UnknownKeyError) Is(target error) bool {
	return target == ErrUnknownKey || target == intf.ErrInvalidArgument
}

// unknownKey describes name, unknown, with the nearest of known; fold
// compares without case (file keys).
func unknownKey(name string, src Source, known []string, fold bool) *UnknownKeyError {
	e := &UnknownKeyError{Name: name, Source: src}
	best := -1
	for _, k := range known {
		a, b := name, k
		if fold {
			a, b = strings.ToLower(a), strings.ToLower(b)
		}
		if d := editDistance(a, b); best < 0 || d < best {
			best, e.Closest = d, k
		}
	}
	// A typo changes a few characters: at most 2, or a third of a long
	// name (the VESTA_ prefix, shared by all variables, not counted).
	n := len(strings.TrimPrefix(name, envPrefix))
	e.Near = best >= 0 && best <= max(2, n/3)
	return e
}

// editDistance is the optimal string alignment distance of a and b: the
// fewest insertions, deletions, substitutions and transpositions of
// adjacent bytes that turn one into the other.
func editDistance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// ConflictError is two settings that contradict each other: one names a
// value the other makes meaningless (machine 5 with machineProvider
// hostname, which takes the id from the host name). Either would be
// silently ignored, so both are refused, each named with where it was set:
//
//	invalid argument: config key machine ("5" from flag --machine) contradicts machineProvider ("hostname" from flag --machine-provider): machineProvider hostname takes the machine id from the host name, so machine would be ignored; remove one of them
//
// It matches intf.ErrInvalidArgument.
type ConflictError struct {
	// Key is the setting that would be ignored, Value its value (a
	// secret's is never kept) and Source where it was set.
	Key, Value string
	Source     Source
	// Other is the setting it contradicts, which may be in force by
	// default (OtherSource is then LayerDefault).
	Other, OtherValue string
	OtherSource       Source
	// Why says how they contradict each other.
	Why string
}

func (e *ConflictError) Error() string {
	other := fmt.Sprintf("%q from %s", e.OtherValue, e.OtherSource)
	if e.OtherSource.Layer == LayerDefault {
		other = fmt.Sprintf("%q, the default", e.OtherValue)
	}
	return fmt.Sprintf("%v: config key %s (%q from %s) contradicts %s (%s): %s; remove one of them",
		intf.ErrInvalidArgument, e.Key, e.Value, e.Source, e.Other, other, e.Why)
}

// Unwrap makes errors.Is(err, intf.ErrInvalidArgument) true.
func (e *ConflictError) Unwrap() error { return intf.ErrInvalidArgument }
