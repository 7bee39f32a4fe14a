package segstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// A period tag's format is literal text with fields in braces:
//
//	{yyyy} {yy} {MM} {dd}  the period's year, year in the century, month, day (UTC),
//	                       several in one pair of braces: {yyyyMMdd}, {yyMM}
//	{seq}                  the sequence in the period, from 1, without padding
//	{seq:N}                the sequence zero-padded to N digits, 1 <= N <= 18
//
// e.g. "ORD{yyyyMMdd}{seq:6}" → "ORD20261127000123". The format holds
// {seq} exactly once and every date field of its grouping (a day tag
// needs a year, {MM} and {dd}): so two periods never write the same text.
// A date field finer than the grouping ({dd} in a month tag) is refused.
// Literal text is printable ASCII without braces.

// Limits of a format.
const (
	MaxFormatLen = 128 // vesta_period_tags.format is a VARCHAR(128)
	MaxSeqWidth  = 18  // 10^18-1 < 2^63
)

// ErrNumberOverflow is intf.ErrPeriodExhausted: a period's sequence
// outgrew its format's {seq:N} width. It is never wrapped: the tag issues
// no more numbers in that period (widen the format, or take a larger N).
var ErrNumberOverflow = intf.ErrPeriodExhausted

// Format is a parsed period format; Render writes numbers with it.
type Format struct {
	src   string
	parts []part
	width int // of {seq:N}; 0: {seq}, unpadded
}

type partKind uint8

const (
	partLit partKind = iota
	partYYYY
	partYY
	partMM
	partDD
	partSeq
)

type part struct {
	kind partKind
	lit  string
}

// dateTokens are the date fields, longest first (yyyy before yy).
var dateTokens = []struct {
	tok  string
	kind partKind
}{{"yyyy", partYYYY}, {"yy", partYY}, {"MM", partMM}, {"dd", partDD}}

// ParseFormat checks src against the grouping g, naming the field
// "format" and what is wrong.
func ParseFormat(src string, g Grouping) (*Format, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: format %q: %s", intf.ErrInvalidArgument, src, fmt.Sprintf(format, a...))
	}
	if _, err := ParseGrouping(string(g)); err != nil {
		return nil, err
	}
	if src == "" {
		return nil, bad("empty: give literal text and {seq}, e.g. ORD{yyyyMMdd}{seq:6}")
	}
	if len(src) > MaxFormatLen {
		return nil, bad("%d bytes, at most %d", len(src), MaxFormatLen)
	}
	f := &Format{src: src}
	seqs := 0
	seen := map[partKind]bool{}
	for rest := src; rest != ""; {
		open := strings.IndexByte(rest, '{')
		lit := rest
		if open >= 0 {
			lit = rest[:open]
		}
		for i := 0; i < len(lit); i++ {
			if c := lit[i]; c < 0x20 || c > 0x7e || c == '}' {
				return nil, bad("character %q not allowed in literal text: use printable ASCII without braces", rune(c))
			}
		}
		if lit != "" {
			f.parts = append(f.parts, part{kind: partLit, lit: lit})
		}
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, bad("'{' at byte %d is never closed", len(src)-len(rest)+open)
		}
		field := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		if field == "seq" || strings.HasPrefix(field, "seq:") {
			seqs++
			if w, ok := strings.CutPrefix(field, "seq:"); ok {
				n, err := strconv.Atoi(w)
				if err != nil || n < 1 || n > MaxSeqWidth {
					return nil, bad("{%s}: the width must be 1..%d", field, MaxSeqWidth)
				}
				f.width = n
			}
			f.parts = append(f.parts, part{kind: partSeq})
			continue
		}
		if field == "" {
			return nil, bad("empty {}: want {seq}, {seq:N} or date fields (yyyy, yy, MM, dd)")
		}
	tokens:
		for t := field; t != ""; {
			for _, d := range dateTokens {
				if strings.HasPrefix(t, d.tok) {
					f.parts = append(f.parts, part{kind: d.kind})
					seen[d.kind] = true
					t = t[len(d.tok):]
					continue tokens
				}
			}
			return nil, bad("unknown field {%s}: want {seq}, {seq:N} or date fields yyyy, yy, MM, dd (e.g. {yyyyMMdd})", field)
		}
	}
	switch {
	case seqs == 0:
		return nil, bad("no {seq} or {seq:N}: the sequence must be in the number")
	case seqs > 1:
		return nil, bad("{seq} appears %d times: once only", seqs)
	case seen[partDD] && !g.hasDay():
		return nil, bad("{dd} is finer than the group %s: a %s's numbers would change day within the period", g, g)
	case seen[partMM] && !g.hasMonth():
		return nil, bad("{MM} is finer than the group %s", g)
	case !seen[partYYYY] && !seen[partYY]:
		return nil, bad("no year (yyyy or yy): numbers of different %ss would repeat", g)
	case g.hasMonth() && !seen[partMM]:
		return nil, bad("no month (MM): with group %s numbers of different months would repeat", g)
	case g.hasDay() && !seen[partDD]:
		return nil, bad("no day (dd): with group day numbers of different days would repeat")
	}
	return f, nil
}

// String is the format as written.
func (f *Format) String() string { return f.src }

// Width is N of {seq:N}; 0 for {seq}.
func (f *Format) Width() int { return f.width }

// MaxSeq is the largest sequence the format can write.
func (f *Format) MaxSeq() int64 {
	if f.width == 0 {
		return 1<<63 - 1
	}
	m := int64(1)
	for range f.width {
		m *= 10
	}
	return m - 1
}

// Render writes the number seq of the period starting at start (UTC). A
// seq wider than {seq:N} is ErrNumberOverflow, never wrapped.
func (f *Format) Render(start time.Time, seq int64) (string, error) {
	if seq < 1 || seq > f.MaxSeq() {
		return "", fmt.Errorf("sequence %d does not fit {seq:%d} (at most %d): %w", seq, f.width, f.MaxSeq(), ErrNumberOverflow)
	}
	start = start.UTC()
	b := make([]byte, 0, len(f.src)+f.width+8)
	for _, p := range f.parts {
		switch p.kind {
		case partLit:
			b = append(b, p.lit...)
		case partYYYY:
			b = appendPadded(b, int64(start.Year()), 4)
		case partYY:
			b = appendPadded(b, int64(start.Year()%100), 2)
		case partMM:
			b = appendPadded(b, int64(start.Month()), 2)
		case partDD:
			b = appendPadded(b, int64(start.Day()), 2)
		case partSeq:
			b = appendPadded(b, seq, f.width)
		}
	}
	return string(b), nil
}

func appendPadded(b []byte, v int64, width int) []byte {
	var d [20]byte
	s := strconv.AppendInt(d[:0], v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
