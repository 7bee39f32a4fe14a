package access

import (
	"fmt"
	"strings"

	"github.com/vesta-go/vesta/intf"
)

// Scope names what a call may do.
type Scope string

// The scopes. A segment scope names one tag (SegmentScope) or every tag
// (ScopeAllSegments).
const (
	// ScopeGenId allows GenId and GenIds (/genid).
	ScopeGenId Scope = "genid"
	// ScopeDecode allows ExpId, MakeId and TransTime (/expid, /makeid,
	// /transtime): no ID is issued.
	ScopeDecode Scope = "decode"
	// ScopeMetrics allows /metrics.
	ScopeMetrics Scope = "metrics"
	// ScopeAllSegments allows the segment IDs of every tag.
	ScopeAllSegments Scope = segmentPrefix + "*"

	segmentPrefix = "segment:"
)

// SegmentScope is the scope of one tag's segment IDs: "segment:<tag>".
func SegmentScope(tag string) Scope { return Scope(segmentPrefix + tag) }

// ParseScope checks a scope as written in an auth file.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(s); sc {
	case ScopeGenId, ScopeDecode, ScopeMetrics, ScopeAllSegments:
		return sc, nil
	}
	if tag, ok := strings.CutPrefix(s, segmentPrefix); ok {
		if err := intf.CheckTag(tag); err != nil {
			return "", fmt.Errorf("scope %q: the tag %w", s, err)
		}
		return Scope(s), nil
	}
	return "", fmt.Errorf("scope %q: want genid, decode, metrics, segment:* or segment:<tag>", s)
}

// tag returns the tag of a segment scope.
func (s Scope) tag() (string, bool) { return strings.CutPrefix(string(s), segmentPrefix) }

// scopeSet is a client's scopes, for a lookup without allocation.
type scopeSet struct {
	fixed       uint8 // bits of the fixed scopes
	allSegments bool
	tags        map[string]struct{}
}

const (
	bitGenId uint8 = 1 << iota
	bitDecode
	bitMetrics
)

func newScopeSet(scopes []Scope) scopeSet {
	set := scopeSet{tags: map[string]struct{}{}}
	for _, s := range scopes {
		switch s {
		case ScopeGenId:
			set.fixed |= bitGenId
		case ScopeDecode:
			set.fixed |= bitDecode
		case ScopeMetrics:
			set.fixed |= bitMetrics
		case ScopeAllSegments:
			set.allSegments = true
		default:
			if tag, ok := s.tag(); ok {
				set.tags[tag] = struct{}{}
			}
		}
	}
	return set
}

// has says whether the set allows s.
func (set *scopeSet) has(s Scope) bool {
	switch s {
	case ScopeGenId:
		return set.fixed&bitGenId != 0
	case ScopeDecode:
		return set.fixed&bitDecode != 0
	case ScopeMetrics:
		return set.fixed&bitMetrics != 0
	case ScopeAllSegments:
		return set.allSegments
	}
	tag, ok := s.tag()
	if !ok {
		return false
	}
	if set.allSegments {
		return true
	}
	_, ok = set.tags[tag]
	return ok
}

// anySegment says whether the set allows the segment IDs of some tag.
func (set *scopeSet) anySegment() bool { return set.allSegments || len(set.tags) > 0 }
