package config

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

var stderr = os.Stderr

// reader converts raw values strictly and keeps the first error, so Load
// reads straight through and reports the first wrong key.
type reader struct {
	// fileVals holds the config file's values only: read a key with
	// lookup (or raw, str, ...), which applies the flag and the variable
	// first.
	fileVals *viper.Viper
	fs       *pflag.FlagSet // the flags
	file     string         // the config file's path, "" when none
	lines    fileLines      // the file's keys' lines, for the errors
	err      error
}

// emptyEnv returns the environment variable of key when it is set to ""
// and no flag overrides it. lookup ignores such a variable (the file or
// the default applies, as for keys whose empty value means "default");
// for the keys that mean nothing when empty it is a mistake to report,
// e.g. a template that expanded to nothing.
func (r *reader) emptyEnv(key string) (string, bool) {
	k, ok := keyNamed(key)
	if !ok {
		return "", false
	}
	for _, flag := range []string{k.Flag, k.Alias.Flag} {
		if f := r.fs.Lookup(flag); flag != "" && f != nil && f.Changed {
			return "", false
		}
	}
	envs := []string{k.Env, k.Alias.Env}
	for _, env := range envs {
		if env != "" && os.Getenv(env) != "" {
			return "", false // another name of the key holds a value: it applies
		}
	}
	for _, env := range envs {
		if v, set := os.LookupEnv(env); env != "" && set && v == "" {
			return env, true
		}
	}
	return "", false
}

// failEmptyEnv reports key when its environment variable is set but empty.
func (r *reader) failEmptyEnv(key, want string) bool {
	env, empty := r.emptyEnv(key)
	if empty {
		r.failFrom(key, "", Source{Layer: LayerEnv, Name: env}, want+" (the variable is set but empty)")
	}
	return empty
}

// fail refuses the value of name (a key, or Vesta's name of one), naming
// where it was set.
func (r *reader) fail(name string, value any, want string) {
	r.failFrom(name, value, r.source(name), want)
}

func (r *reader) failFrom(name string, value any, src Source, want string) {
	if r.err != nil {
		return
	}
	r.err = newValueError(name, fmt.Sprint(value), src, want)
}

// raw returns the value of key, or of its Vesta alias, and the name it was
// found under.
func (r *reader) raw(key, alias string) (any, string, bool) {
	if v, _, ok := r.lookup(key); ok {
		return v, key, true
	}
	if alias != "" {
		if v, _, ok := r.lookup(alias); ok {
			return v, alias, true
		}
	}
	return nil, key, false
}

func (r *reader) str(key, alias string) string {
	v, _, ok := r.raw(key, alias)
	if !ok {
		return ""
	}
	if l, isList := v.([]any); isList { // a YAML/TOML list, e.g. ips
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// given is str for a key that has no meaning when empty: one set to ""
// (an empty flag, variable or file value, e.g. a template that expanded to
// nothing) is an error naming the key, never a silent default.
func (r *reader) given(key, alias, want string) string {
	if r.failEmptyEnv(key, want) {
		return ""
	}
	s := r.str(key, alias)
	if _, name, ok := r.raw(key, alias); ok && s == "" {
		r.fail(name, "", want)
	}
	return s
}

func (r *reader) int(key, alias string, def, min, max int64) int64 {
	want := fmt.Sprintf("an integer %d..%d", min, max)
	n, name, ok := r.integer(key, alias, want)
	if !ok {
		return def
	}
	if n < min || n > max {
		r.fail(name, n, want)
		return def
	}
	return n
}

// integer parses the integer value of key, or of its alias, and returns it
// with the name it was found under; ok is false when the key is not set or
// its value is no integer (then it fails with want).
func (r *reader) integer(key, alias, want string) (n int64, name string, ok bool) {
	if r.failEmptyEnv(key, want) {
		return 0, key, false
	}
	v, name, set := r.raw(key, alias)
	if !set {
		return 0, name, false
	}
	switch x := v.(type) {
	case int:
		return int64(x), name, true
	case int64:
		return x, name, true
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<62 {
			r.fail(name, x, want)
			return 0, name, false
		}
		return int64(x), name, true
	}
	s := strings.TrimSpace(fmt.Sprint(v))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.fail(name, s, want)
		return 0, name, false
	}
	return n, name, true
}

func (r *reader) bool(key, alias string, def bool) bool {
	if r.failEmptyEnv(key, "true or false") {
		return def
	}
	v, name, ok := r.raw(key, alias)
	if !ok {
		return def
	}
	if b, isBool := v.(bool); isBool {
		return b
	}
	if b, ok := parseBool(fmt.Sprint(v)); ok {
		return b
	}
	r.fail(name, v, "true or false (also on/off, yes/no, 1/0)")
	return def
}

func (r *reader) duration(key string, def, min, max time.Duration) time.Duration {
	want := fmt.Sprintf("a duration %s..%s, e.g. 5s", min, max)
	s := r.given(key, "", want)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < min || d > max {
		r.fail(key, s, want)
		return def
	}
	return d
}

func (r *reader) oneOf(key, def string, allowed ...string) string {
	want := "one of " + strings.Join(allowed, ", ")
	s := r.given(key, "", want)
	if s == "" {
		return def
	}
	s = strings.ToLower(s)
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	r.fail(key, s, want)
	return def
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 || p > 65535 {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return p, nil
}
