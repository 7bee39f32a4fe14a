package config

import (
	"os"
	"strconv"
)

// Layer is where a configuration value comes from. A key takes its value
// from the highest layer that sets it: a flag given on the command line,
// else its environment variable, else the config file (the native key,
// then Vesta's property name), else the default.
type Layer int

// The layers, lowest first.
const (
	// LayerDefault: nothing set the key; the default applies.
	LayerDefault Layer = iota
	// LayerFile: the config file (--config, VESTA_CONFIG).
	LayerFile
	// LayerEnv: the key's VESTA_* environment variable.
	LayerEnv
	// LayerFlag: the key's flag on the command line.
	LayerFlag
)

func (l Layer) String() string {
	switch l {
	case LayerFile:
		return "file"
	case LayerEnv:
		return "environment variable"
	case LayerFlag:
		return "flag"
	}
	return "default"
}

// Source says which layer set a value, and how it is named there.
type Source struct {
	Layer Layer
	// Name is the flag ("--machine"), the variable ("VESTA_MACHINE") or
	// the file's path; "" for the default.
	Name string
	// Line is the line of the key in the file, 0 when it is not known.
	Line int
}

// String names the source as an operator finds it: "flag --machine",
// "environment variable VESTA_MACHINE", "file /etc/vesta.yaml line 3",
// "default".
func (s Source) String() string {
	switch {
	case s.Layer == LayerDefault:
		return "default"
	case s.Layer == LayerFile && s.Line > 0:
		return "file " + s.Name + " line " + strconv.Itoa(s.Line)
	}
	return s.Layer.String() + " " + s.Name
}

// keyNamed returns the key called name (a file key's name, not Vesta's).
func keyNamed(name string) (Key, bool) {
	for _, k := range Keys() {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// lookup finds the value of name — a key, or Vesta's name of one, which
// only a file can hold — by precedence: its flag when given, its
// environment variable when set and not empty (an empty one is ignored,
// or refused where empty means nothing: emptyEnv), the file. ok is false
// when no layer sets it; the source is then the default.
func (r *reader) lookup(name string) (value any, src Source, ok bool) {
	k, isKey := keyNamed(name)
	if isKey { // in each layer the key's own name first, then its alias
		for _, flag := range []string{k.Flag, k.Alias.Flag} {
			if f := r.fs.Lookup(flag); flag != "" && f != nil && f.Changed {
				return f.Value.String(), Source{Layer: LayerFlag, Name: "--" + flag}, true
			}
		}
		for _, env := range []string{k.Env, k.Alias.Env} {
			if v := os.Getenv(env); env != "" && v != "" {
				return v, Source{Layer: LayerEnv, Name: env}, true
			}
		}
	}
	for _, key := range []string{name, k.Alias.Name} {
		if r.file != "" && key != "" && r.fileVals.IsSet(key) { // viper: set and not null
			return r.fileVals.Get(key), Source{Layer: LayerFile, Name: r.file, Line: r.lines.of(r.file, key)}, true
		}
	}
	return nil, Source{}, false
}

// isSet reports whether any layer sets name.
func (r *reader) isSet(name string) bool {
	_, _, ok := r.lookup(name)
	return ok
}

// source is where the value of name comes from.
func (r *reader) source(name string) Source {
	_, src, _ := r.lookup(name)
	return src
}

// sources are where the keys set were set (Config.KeyError); a key
// missing from them was not set.
func (r *reader) sources(keys []Key) map[string]Source {
	var m map[string]Source
	for _, k := range keys {
		if src := r.source(k.Name); src.Layer != LayerDefault {
			if m == nil {
				m = map[string]Source{}
			}
			m[k.Name] = src
		}
	}
	return m
}
