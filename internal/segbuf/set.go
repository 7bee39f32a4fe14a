package segbuf

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Set is the buffers of many names (segment tags): a map replaced whole
// (copy on write) and the hot name, the last one looked up. Looking a
// name up in a map, or even comparing strings, costs more than the atomic
// add of TryNext, and most callers ask for one tag again and again, with
// the same string: Hot finds its buffer by comparing the string's pointer
// and length alone.
type Set struct {
	m      atomic.Pointer[map[string]*Buffer]
	hot    atomic.Pointer[hotName]
	closed atomic.Bool
	mu     sync.Mutex // serialises Add and Store
}

// hotName is an immutable pair: a caller's name string and its buffer.
type hotName struct {
	key string
	b   *Buffer
}

// NewSet returns an empty Set.
func NewSet() *Set {
	s := &Set{}
	s.m.Store(&map[string]*Buffer{})
	return s
}

// Hot returns the buffer of name if name is the very string (the same
// bytes in memory) of the last lookup; nil otherwise: call Find then. It
// is the fast path, small enough to be inlined.
func (s *Set) Hot(name string) *Buffer {
	if h := s.hot.Load(); h != nil && len(h.key) == len(name) && unsafe.StringData(h.key) == unsafe.StringData(name) {
		return h.b
	}
	return nil
}

// Find returns the buffer of name, nil when the set has none, and makes
// name the hot one (one small allocation when the hot name changes).
func (s *Set) Find(name string) *Buffer {
	m := s.m.Load()
	if h := s.hot.Load(); h != nil && h.key == name {
		return h.b
	}
	b := (*m)[name]
	if b == nil || s.closed.Load() {
		return b
	}
	h := &hotName{key: name, b: b}
	s.hot.Store(h)
	// Store replaces the map, then clears hot; Close sets closed, then
	// clears hot. Checked after storing h, so that either they see h (and
	// clear it) or this sees them (and takes h back): a removed name or a
	// closed set is never served from hot.
	if s.m.Load() != m || s.closed.Load() {
		s.hot.CompareAndSwap(h, nil)
	}
	return b
}

// Map returns the current map; do not modify it.
func (s *Set) Map() map[string]*Buffer { return *s.m.Load() }

// Store replaces the map.
func (s *Set) Store(m map[string]*Buffer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.Store(&m)
	s.hot.Store(nil) // after the new map: see Find
}

// Add returns the buffer of name, adding the one mk makes when there is
// none.
func (s *Set) Add(name string, mk func() *Buffer) *Buffer {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.m.Load()
	if b := old[name]; b != nil {
		return b
	}
	m := make(map[string]*Buffer, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	b := mk()
	m[name] = b
	s.m.Store(&m) // hot stays valid: no name was removed
	return b
}

// Close makes Hot find nothing from now on.
func (s *Set) Close() {
	s.closed.Store(true)
	s.hot.Store(nil) // after closed: see Find
}
