package segstore

import (
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Grouping is the length of a period tag's periods: its numbers restart at
// 1 each period. Periods are calendar periods in UTC.
type Grouping string

// The groupings.
const (
	GroupDay   Grouping = "day"
	GroupMonth Grouping = "month"
	GroupYear  Grouping = "year"
)

// Groupings lists the groupings, for messages and help.
func Groupings() []Grouping { return []Grouping{GroupDay, GroupMonth, GroupYear} }

// ParseGrouping reads "day", "month" or "year"; anything else is an error
// naming the field "group".
func ParseGrouping(s string) (Grouping, error) {
	switch g := Grouping(s); g {
	case GroupDay, GroupMonth, GroupYear:
		return g, nil
	}
	return "", fmt.Errorf("%w: group %q: want one of %v", intf.ErrInvalidArgument, s, Groupings())
}

// keyLayout is the layout of the period's key: the period's start written
// yyyyMMdd, yyyyMM or yyyy.
func (g Grouping) keyLayout() string {
	switch g {
	case GroupDay:
		return "20060102"
	case GroupMonth:
		return "200601"
	default:
		return "2006"
	}
}

// Key is the key of the period holding t (in UTC): "20261127", "202611"
// or "2026".
func (g Grouping) Key(t time.Time) string { return t.UTC().Format(g.keyLayout()) }

// Start is the first instant of the period of key.
func (g Grouping) Start(key string) (time.Time, error) {
	t, err := time.ParseInLocation(g.keyLayout(), key, time.UTC)
	if err != nil || len(key) != len(g.keyLayout()) {
		return time.Time{}, fmt.Errorf("period %q is not a %s period (%s)", key, g, g.keyLayout())
	}
	return t, nil
}

// End is the first instant after the period of key: the next period's
// start.
func (g Grouping) End(key string) (time.Time, error) {
	t, err := g.Start(key)
	if err != nil {
		return t, err
	}
	switch g {
	case GroupDay:
		return t.AddDate(0, 0, 1), nil
	case GroupMonth:
		return t.AddDate(0, 1, 0), nil
	default:
		return t.AddDate(1, 0, 0), nil
	}
}

// hasMonth and hasDay say whether g's periods lie within one month, one day.
func (g Grouping) hasMonth() bool { return g == GroupDay || g == GroupMonth }
func (g Grouping) hasDay() bool   { return g == GroupDay }
