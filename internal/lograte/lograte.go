// Package lograte keeps a flood of events from becoming a flood of log
// lines: at most one line per interval, telling how many events it
// stands for.
package lograte

import (
	"sync"
	"time"
)

// Limiter says when to log. The zero value logs the first event, then
// every Interval (zero: DefaultInterval). It is safe for concurrent use.
type Limiter struct {
	Interval time.Duration

	mu       sync.Mutex
	last     time.Time
	logged   bool
	unlogged uint64
}

// DefaultInterval spaces the lines of a Limiter without an Interval.
const DefaultInterval = 10 * time.Second

// Allow records an event at now and says whether to log it, and how many
// events since the last line were not logged.
func (l *Limiter) Allow(now time.Time) (ok bool, suppressed uint64) {
	every := l.Interval
	if every <= 0 {
		every = DefaultInterval
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.logged && now.Sub(l.last) < every {
		l.unlogged++
		return false, 0
	}
	n := l.unlogged
	l.last, l.logged, l.unlogged = now, true, 0
	return true, n
}
