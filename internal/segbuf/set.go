package segbuf

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Set is the buffers of many names (segment tags): a map replaced whole
// (copy on write) and the hot buffer, the last one looked up. Looking a
// name up in a map, or even comparing strings, costs more than the atomic
// add of TryNext, and most callers ask for one tag again and again, with
// the same string: Hot finds the hot buffer by comparing the string's
// pointer and length alone. The zero Set is empty and ready.
type Set struct {
	hot    atomic.Pointer[Buffer]
	m      atomic.Pointer[map[string]*Buffer]
	closed atomic.Bool
	mu     sync.Mutex // serialises Add and Store
}

// Hot returns the hot buffer if name is the very string (the same bytes
// in memory) a lookup of it was made with; nil otherwise: call Find then.
// It is the fast path, small enough to be inlined. A pointer and length
// equal to those of a string that named the buffer mean the same bytes,
// so the same name.
func (s *Set) Hot(name string) *Buffer {
	if b := s.hot.Load(); b != nil && len(name) == len(b.name) && unsafe.StringData(name) == b.hotKey.Load() {
		return b
	}
	return nil
}

// Find returns the buffer of name, nil when the set has none, and makes
// it the hot one, remembering name's bytes for Hot.
func (s *Set) Find(name string) *Buffer {
	m := s.m.Load()
	if m == nil {
		return nil
	}
	b := (*m)[name]
	if b == nil || s.closed.Load() {
		return b
	}
	if s.hot.Load() == b && b.hotKey.Load() == unsafe.StringData(name) {
		return b // nothing to store: callers that keep to one tag write nothing shared
	}
	b.hotKey.Store(unsafe.StringData(name))
	s.hot.Store(b)
	// Store replaces the map, then clears hot; Close sets closed, then
	// clears hot. Checked after storing b, so that either they see b (and
	// clear it) or this sees them (and takes b back): a removed name or a
	// closed set is never served from hot.
	if s.m.Load() != m || s.closed.Load() {
		s.hot.CompareAndSwap(b, nil)
	}
	return b
}

// Map returns the current map; do not modify it.
func (s *Set) Map() map[string]*Buffer {
	if m := s.m.Load(); m != nil {
		return *m
	}
	return nil
}

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
	old := s.Map()
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
