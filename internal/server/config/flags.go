package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// The types of the keys' values, as --help names them (pflag's names).
const (
	typeBool     = "bool"
	typeInt      = "int"
	typeDuration = "duration"
	typeString   = "string"
	typeList     = "strings" // comma-separated; a list in YAML or TOML
)

// listKeys are the keys whose value is a list.
var listKeys = []string{KeyIPs, KeyEtcdEndpoints, KeySegmentTags}

// keyType is the type of k's values, whose default in the program is def:
// a list for the list keys, else the type of the default (written from
// the constant the loader applies), else a string.
func keyType(k Key, def string) string {
	switch {
	case slices.Contains(listKeys, k.Name):
		return typeList
	case def == "":
		return typeString
	}
	if def == boolean(true) || def == boolean(false) {
		return typeBool
	}
	if _, err := strconv.ParseInt(def, 10, 64); err == nil {
		return typeInt
	}
	if _, err := time.ParseDuration(def); err == nil {
		return typeDuration
	}
	return typeString
}

// keyValue is the flag of a key. It keeps the text given, which Load
// parses as strictly as the key's variable and file value (a typed pflag
// would parse flags alone, by other rules and with errors that name no
// key), and names the key's type for --help.
type keyValue struct{ s, typ string }

func (v *keyValue) String() string     { return v.s }
func (v *keyValue) Set(s string) error { v.s = s; return nil }
func (v *keyValue) Type() string       { return v.typ }

// parseBool reads the booleans every layer accepts: true/false, on/off,
// yes/no, 1/0, in any case.
func parseBool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "on", "yes", "1":
		return true, true
	case "false", "off", "no", "0":
		return false, true
	}
	return false, false
}

// Parse parses the command line (without the program's name) into the
// flag set. A boolean key's flag alone means true (--no-data-dir); its
// value follows "=" (--no-data-dir=false) or, as other flags' values do,
// comes as the next argument when that is a boolean (--no-data-dir false)
// or, in a program that takes no arguments (TakesArgs false), any word
// that is no flag: --no-data-dir maybe is then refused as
// --no-data-dir=maybe is, rather than taken for an argument.
//
// An unknown flag is an error that names the nearest real one when there
// is a near one (unknown flag: --machien: did you mean --machine?).
func (l *Loader) Parse(args []string) error {
	err := l.fs.Parse(l.joinBoolValues(args))
	if name, unknown := strings.CutPrefix(fmt.Sprint(err), "unknown flag: --"); err != nil && unknown {
		var flags []string
		l.fs.VisitAll(func(f *pflag.Flag) { flags = append(flags, f.Name) })
		if u := unknownKey(name, Source{}, flags, true); u.Near {
			return fmt.Errorf("%w: did you mean --%s?", err, l.ownFlag(u.Closest))
		}
	}
	return err
}

// joinBoolValues writes "--flag value" as "--flag=value" for the boolean
// keys' flags whose value is the next argument (see Parse).
func (l *Loader) joinBoolValues(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		name, long := strings.CutPrefix(a, "--")
		if !long || strings.Contains(name, "=") { // a shorthand, or the value is given
			continue
		}
		f := l.fs.Lookup(name)
		switch {
		case f == nil:
		case f.NoOptDefVal == "": // takes the next argument as its value
			if i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		case f.Value.Type() == typeBool && i+1 < len(args) && l.isKeyFlag(f.Name):
			next := args[i+1]
			if _, isBool := parseBool(next); (isBool || !l.TakesArgs) && !strings.HasPrefix(next, "-") {
				out[len(out)-1] = a + "=" + next
				i++
			}
		}
	}
	return out
}

// ownFlag is the key's own flag when flag is an alias's: a typo of an
// alias is pointed at the key's name.
func (l *Loader) ownFlag(flag string) string {
	for _, k := range l.keys() {
		if k.Alias.Flag != "" && k.Alias.Flag == flag {
			return k.Flag
		}
	}
	return flag
}

// isKeyFlag reports whether flag is the flag of a registered key.
func (l *Loader) isKeyFlag(flag string) bool {
	for _, k := range l.keys() {
		if k.Flag == flag || (k.Alias.Flag != "" && k.Alias.Flag == flag) {
			return true
		}
	}
	return false
}
