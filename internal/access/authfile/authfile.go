// Package authfile reads the auth file of a vesta-go server: a YAML list
// of clients, each with the SHA-256 of its token, its scopes and its
// quota, into an access.Policy (docs/security.md):
//
//	clients:
//	  - name: orders                 # in logs and metrics labels
//	    tokenSHA256: "<hex sha256 of the token>"   # or a list, while rotating
//	    scopes: [genid, decode, "segment:order"]
//	    rate: 200000                 # IDs per second (omitted: no limit)
//	    burst: 20000                 # IDs above the rate at once
//
// Every error names the file and the line at fault. A Watcher re-reads
// the file when it changes and puts the new policy in force in an
// access.Guard; a broken file leaves the old policy in force.
package authfile

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/reload"
)

// Error is a problem of an auth file; Line is 0 when it is the file's as
// a whole (it cannot be read, or is empty).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("auth file %s: line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("auth file %s: %s", e.File, e.Msg)
}

// Load reads and validates the auth file at path.
func Load(path string) (*access.Policy, error) {
	data, err := reload.ReadFile(path) // a regular file, bounded: never a FIFO or /dev/zero
	if err != nil {
		return nil, &Error{File: path, Msg: unwrapPath(err)}
	}
	return Parse(path, data)
}

// unwrapPath drops the path os.ReadFile puts in its error: Error says it.
func unwrapPath(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse validates the content of an auth file; name names it in errors.
func Parse(name string, data []byte) (*access.Policy, error) {
	fail := func(line int, format string, a ...any) error {
		return &Error{File: name, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fail(0, "empty: want a list under clients: (see docs/security.md)")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fail(yamlLine(err), "not YAML: %s", yamlMsg(err))
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fail(line(&doc), "want a mapping with the key clients")
	}
	root := doc.Content[0]
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "clients" {
			return nil, fail(k.Line, "unknown key %q: the file has only clients", clip(k.Value))
		}
		list = v
	}
	if list == nil {
		return nil, fail(root.Line, "no clients key")
	}
	if list.Kind != yaml.SequenceNode && !(list.Kind == yaml.ScalarNode && list.Tag == "!!null") {
		return nil, fail(list.Line, "clients: want a list of clients")
	}
	clients := make([]access.Client, len(list.Content))
	lines := make([]map[string]int, len(list.Content))
	for i, n := range list.Content {
		c, fieldLines, err := parseClient(n, i, fail)
		if err != nil {
			return nil, err
		}
		clients[i], lines[i] = c, fieldLines
	}
	p, err := access.NewPolicy(clients)
	var ce *access.ClientError
	if errors.As(err, &ce) {
		l := lines[ce.Index][ce.Field]
		if l == 0 {
			l = list.Content[ce.Index].Line
		}
		return nil, fail(l, "%s", ce.Error())
	}
	return p, err
}

// parseClient reads one entry of clients; fieldLines maps each field to
// its line, for the errors of access.NewPolicy.
func parseClient(n *yaml.Node, i int, fail func(int, string, ...any) error) (access.Client, map[string]int, error) {
	var c access.Client
	lines := map[string]int{}
	where := fmt.Sprintf("client %d", i+1)
	if n.Kind != yaml.MappingNode {
		return c, nil, fail(n.Line, "%s: want a mapping of name, tokenSHA256, scopes, rate, burst", where)
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		if _, dup := lines[k.Value]; dup {
			return c, nil, fail(k.Line, "%s: %s given twice", where, clip(k.Value))
		}
		lines[k.Value] = k.Line
		var err error
		switch k.Value {
		case "name":
			err = scalar(v, &c.Name)
			where = fmt.Sprintf("client %d (%s)", i+1, clip(c.Name))
		case "tokenSHA256":
			c.Tokens, err = digests(v)
		case "scopes":
			var ss []string
			if err = v.Decode(&ss); err != nil {
				err = errors.New("want a list of scopes, e.g. [genid, decode, \"segment:order\"]")
			}
			for _, s := range ss {
				c.Scopes = append(c.Scopes, access.Scope(s))
			}
		case "rate":
			if err = v.Decode(&c.Rate); err != nil || (v.Tag != "!!int" && v.Tag != "!!float") {
				err = errors.New("want a number of IDs per second")
			}
		case "burst":
			if err = v.Decode(&c.Burst); err != nil || v.Tag != "!!int" { // yaml would truncate 1.5 to 1
				err = errors.New("want a whole number of IDs")
			}
		default:
			return c, nil, fail(k.Line, "%s: unknown key %q: want name, tokenSHA256, scopes, rate or burst", where, clip(k.Value))
		}
		if err != nil {
			return c, nil, fail(v.Line, "%s: %s: %v", where, k.Value, err)
		}
	}
	return c, lines, nil
}

func scalar(n *yaml.Node, s *string) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("want a string")
	}
	*s = n.Value
	return nil
}

// digests reads tokenSHA256: one hex digest, or a list of them.
func digests(n *yaml.Node) ([][32]byte, error) {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out [][32]byte
	for _, it := range items {
		var s string
		if err := scalar(it, &s); err != nil {
			return nil, errors.New("want the hex SHA-256 of a token, or a list of them")
		}
		b, err := hex.DecodeString(strings.TrimSpace(s))
		if err != nil || len(b) != 32 {
			// Not quoted: someone may have put the token itself here.
			return nil, fmt.Errorf("a value of %d characters is not a hex SHA-256 (64 hex digits); put the token's digest here, never the token (vesta-token prints it)", len(s))
		}
		out = append(out, [32]byte(b))
	}
	return out, nil
}

func line(n *yaml.Node) int {
	if len(n.Content) > 0 {
		return n.Content[0].Line
	}
	return n.Line
}

// yamlLine and yamlMsg take the line out of a yaml.v3 error
// ("yaml: line 3: ...").
func yamlLine(err error) int {
	var l int
	if _, e := fmt.Sscanf(err.Error(), "yaml: line %d:", &l); e == nil {
		return l
	}
	return 0
}

func yamlMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "line ") {
		return rest
	}
	return msg
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Watcher puts the auth file's policy in force in a Guard, again whenever
// the file changes (a reload.Reloader). A broken file leaves the old
// policy in force, and counts as a failed load in the Guard's Stats.
type Watcher struct {
	path  string
	guard *access.Guard
	mu    sync.Mutex
	d     reload.Digest
}

// NewWatcher loads the file at path into guard and returns its Watcher;
// an error leaves guard untouched.
func NewWatcher(path string, guard *access.Guard) (*Watcher, error) {
	w := &Watcher{path: path, guard: guard}
	if _, err := w.load(true); err != nil {
		return nil, err
	}
	return w, nil
}

// Name names the watcher in logs.
func (w *Watcher) Name() string { return "auth file " + w.path }

// Reload re-reads the file and puts it in force when its content changed
// (or when force).
func (w *Watcher) Reload(force bool) (bool, error) {
	changed, err := w.load(force)
	if err != nil {
		w.guard.PolicyLoadFailed()
	}
	return changed, err
}

func (w *Watcher) load(force bool) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, changed, err := w.d.Read(w.path)
	if err != nil {
		return false, &Error{File: w.path, Msg: unwrapPath(err)}
	}
	if !changed && !force {
		return false, nil
	}
	p, err := Parse(w.path, data[0])
	if err != nil {
		return false, err
	}
	w.guard.SetPolicy(p)
	return true, nil
}
