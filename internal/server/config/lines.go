package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
	"go.yaml.in/yaml/v3"
)

// fileLines finds the line of a key in the config file, for the errors
// that name it. Viper keeps no positions, so the file is parsed again, by
// the same parsers, the first time an error needs a line.
type fileLines struct {
	read  bool
	lines map[string]int // lower-case dotted key, as viper names it → line
}

// of returns the line of key (any case) in file, 0 when it is not known.
func (f *fileLines) of(file, key string) int {
	if !f.read {
		f.read = true
		f.lines = keyLines(file)
	}
	return f.lines[strings.ToLower(key)]
}

// keyLines maps the keys of a config file, lower case and dotted as viper
// names them ("machine", "vesta.machine"), to their lines. It is a best
// effort for messages: nil when the file cannot be read or parsed (its
// loading reported that already).
func keyLines(file string) map[string]int {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	lines := map[string]int{}
	add := func(path []string, line int) {
		lines[strings.ToLower(strings.Join(path, "."))] = line
	}
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yaml", ".yml":
		var doc yaml.Node
		if yaml.Unmarshal(b, &doc) == nil && len(doc.Content) > 0 {
			yamlLines(doc.Content[0], nil, add)
		}
	case ".json":
		jsonLines(b, add)
	case ".toml":
		tomlLines(b, add)
	case ".properties", ".props", ".prop":
		_ = eachProperty(b, func(line int, key, _ string) error {
			add([]string{key}, line)
			return nil
		})
	}
	return lines
}

// yamlLines walks a YAML mapping, nested mappings included.
func yamlLines(n *yaml.Node, path []string, add func([]string, int)) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := append(path[:len(path):len(path)], k.Value)
		add(p, k.Line)
		yamlLines(v, p, add)
	}
}

// jsonLines walks a JSON document's objects; a key's line is the line of
// the offset just past it.
func jsonLines(b []byte, add func([]string, int)) {
	dec := json.NewDecoder(bytes.NewReader(b))
	line := func() int { return bytes.Count(b[:dec.InputOffset()], []byte{'\n'}) + 1 }
	var walk func(path []string) error
	walk = func(path []string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := tok.(string)
				p := append(path[:len(path):len(path)], key)
				add(p, line())
				if err := walk(p); err != nil {
					return err
				}
			}
		case json.Delim('['):
			for dec.More() {
				if err := walk(path); err != nil {
					return err
				}
			}
		default:
			return nil
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	_ = walk(nil) // a document that ends early has its lines up to there
}

// tomlLines walks a TOML document: tables, dotted keys and inline tables.
func tomlLines(b []byte, add func([]string, int)) {
	p := unstable.Parser{}
	p.Reset(b)
	keyPath := func(it unstable.Iterator) (path []string, line int) {
		for it.Next() {
			n := it.Node()
			path = append(path, string(n.Data))
			if line == 0 {
				line = p.Shape(n.Raw).Start.Line
			}
		}
		return path, line
	}
	var keyValue func(n *unstable.Node, table []string)
	keyValue = func(n *unstable.Node, table []string) {
		k, line := keyPath(n.Key())
		path := append(table[:len(table):len(table)], k...)
		add(path, line)
		if v := n.Value(); v.Kind == unstable.InlineTable {
			it := v.Children()
			for it.Next() {
				keyValue(it.Node(), path)
			}
		}
	}
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var line int
			table, line = keyPath(e.Key())
			add(table, line)
		case unstable.KeyValue:
			keyValue(e, table)
		}
	}
}
