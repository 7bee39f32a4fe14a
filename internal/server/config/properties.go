package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// Viper no longer reads Java .properties files itself; Vesta's
// configuration is written in them, so we register this small codec.
type propertiesCodec struct{}

func codecs() *viper.DefaultCodecRegistry {
	r := viper.NewCodecRegistry()
	for _, ext := range []string{"properties", "props", "prop"} {
		_ = r.RegisterCodec(ext, propertiesCodec{})
	}
	return r
}

func (propertiesCodec) Encode(map[string]any) ([]byte, error) {
	return nil, errors.New("writing .properties files is not supported")
}

// Decode reads Java properties: "key=value", "key: value" or "key value"
// lines, '#' and '!' comments, '\' line continuations and the escapes \t,
// \n, \r, \f and \uXXXX. Dotted keys become nested maps, as viper expects.
func (propertiesCodec) Decode(b []byte, out map[string]any) error {
	return eachProperty(b, func(line int, key, value string) error {
		if err := setNested(out, strings.Split(key, "."), value); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		return nil
	})
}

// eachProperty calls f with every property of a .properties file, its key
// and value unescaped, and the line it begins on.
func eachProperty(b []byte, f func(line int, key, value string) error) error {
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continues(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		key, value := splitProperty(line)
		k, err := unescape(key)
		if err == nil {
			value, err = unescape(value)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		if err := f(lineNo, k, value); err != nil {
			return err
		}
	}
	return nil
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits at the first unescaped '=', ':' or white space.
func splitProperty(line string) (key, value string) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '=', ':', ' ', '\t', '\f':
			rest := strings.TrimLeft(line[i+1:], " \t\f")
			if (line[i] == ' ' || line[i] == '\t' || line[i] == '\f') && rest != "" && (rest[0] == '=' || rest[0] == ':') {
				rest = strings.TrimLeft(rest[1:], " \t\f")
			}
			return line[:i], rest
		}
	}
	return line, ""
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			sb.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			sb.WriteByte('\t')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 'f':
			sb.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("bad \\u escape in %q", s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("bad \\u escape in %q", s)
			}
			sb.WriteRune(rune(r))
			i += 4
		default:
			sb.WriteByte(s[i])
		}
	}
	return sb.String(), nil
}

func setNested(m map[string]any, path []string, value string) error {
	if slices.Contains(path, "") { // viper would fold such a key into another, or drop it
		return fmt.Errorf("key %q has an empty part between dots", strings.Join(path, "."))
	}
	for i, p := range path[:len(path)-1] {
		next, ok := m[p]
		if !ok {
			child := map[string]any{}
			m[p] = child
			m = child
			continue
		}
		child, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("key %s is both a value and a prefix", strings.Join(path[:i+1], "."))
		}
		m = child
	}
	last := path[len(path)-1]
	if _, isMap := m[last].(map[string]any); isMap {
		return fmt.Errorf("key %s is both a value and a prefix", strings.Join(path, "."))
	}
	m[last] = value
	return nil
}
