package segbuf

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Set is the buffers of many names (segment tags): a map replaced whole
// (copy on write) and the hot range, the current range of the buffer last
// looked up. Looking a name up in a map, or even comparing strings, costs
// more than the atomic add of TryNext, and most callers ask for one tag
// again and again, with the same string: TryNext takes from the hot range
// after comparing the string's pointer and length alone, with the one
// pointer it loads before its add. The zero Set is empty and ready.
type Set struct {
	hot    atomic.Pointer[span]
	m      atomic.Pointer[map[string]*Buffer]
	closed atomic.Bool
	mu     sync.Mutex // serialises Add and Store
}

// TryNext takes one ID from the hot range if name is the very string (the
// same bytes in memory) the range's buffer was looked up by when the range
// was loaded: the fast path, small enough to be inlined. It returns Dry
// otherwise, and when the range is used up: call Find and the buffer's
// methods then. A pointer and length equal to those of a string that named
// the buffer mean the same bytes, so the same name (strings are
// immutable). GotAtThreshold: the caller must Kick name.
func (s *Set) TryNext(name string) (int64, Took) {
	sp := s.hot.Load()
	if sp == nil || unsafe.Pointer(unsafe.StringData(name)) != atomic.LoadPointer(&sp.key) || len(name) != sp.keyLen {
		return 0, Dry
	}
	// The fields are read before the add: a locked add waits for every
	// load before it, so loads after it would lengthen each call.
	end, preloadAt := sp.end, sp.preloadAt
	id := sp.last.Add(1)
	switch {
	case uint64(id) >= uint64(end):
		return 0, Dry
	case id == preloadAt:
		return id, GotAtThreshold
	}
	return id, Got
}

// Kick starts the spare's load of name's buffer, if the set has one: what
// a caller does when TryNext returned GotAtThreshold.
func (s *Set) Kick(name string) {
	if b := s.Find(name); b != nil {
		b.Kick()
	}
}

// Find returns the buffer of name, nil when the set has none, and makes
// its current range the hot one, remembering name's bytes as the key of
// the buffer's next ranges (TryNext serves a range by the key it was made
// with).
func (s *Set) Find(name string) *Buffer {
	m := s.m.Load()
	if m == nil {
		return nil
	}
	b := (*m)[name]
	if b == nil || s.closed.Load() {
		return b
	}
	key := unsafe.StringData(name)
	if b.hotKey.Load() != key {
		b.hotKey.Store(key)
	}
	cur := b.current()
	if cur == b.empty {
		return b
	}
	// A range loaded before any Find (a buffer just added and filled, or
	// loaded at start) has no key: it takes this one, so that the fast
	// path serves it from the next call. A keyed range keeps its key:
	// callers whose every call brings a new string (a server's requests)
	// then write nothing shared here, and the next range is keyed by
	// hotKey.
	if atomic.LoadPointer(&cur.key) == nil {
		atomic.CompareAndSwapPointer(&cur.key, nil, unsafe.Pointer(key))
	}
	if s.hot.Load() == cur {
		return b // nothing to store: callers that keep to one tag write nothing shared
	}
	s.hot.Store(cur)
	// Store replaces the map, then clears hot; Close sets closed, then
	// clears hot. Checked after storing cur, so that either they see it
	// (and clear it) or this sees them (and takes it back): a removed name
	// or a closed set is never served from hot.
	if s.m.Load() != m || s.closed.Load() {
		s.hot.CompareAndSwap(cur, nil)
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
