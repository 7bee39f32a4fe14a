package segtest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
)

// DayBoundary is the one test of a day tag's numbers across midnight,
// run against every store (segtest.Mem in service/segment, SQLite and
// PostgreSQL in generatorsuite): Callers goroutines take numbers of Tag
// from Gens (the nodes) while a driver moves Clock by Step once a number
// was issued (or a node waits on Clock for the period's end), then the
// database's clock, past Midnight+After and until NewDay numbers of the
// new day were issued. The Generators' RefreshInterval must end after
// Midnight+After (the default does), so that a node waiting on Clock
// means a period's end.
type DayBoundary struct {
	Gens     []*segment.Generator
	Tag      string // a day tag formatted ORD{yyyyMMdd}{seq:6}
	Clock    *Clock // the nodes' time
	Midnight time.Time
	Step     time.Duration
	After    time.Duration
	NewDay   int64
	Callers  int
	// SetDB moves the database's clock to the nodes' time after each
	// step (nil: the store reads Clock itself).
	SetDB func(time.Time)
}

// issued is one number and the database's time before its call.
type issued struct {
	n   intf.SegmentNumber
	pre time.Time
}

// Run runs the load and checks that every text is unique and written
// ORD<period><seq:6>, that both days start at 1, and that no number of
// the old day comes from a call made once the database's clock had passed
// midnight (so none once a range of the new day could exist). It returns
// the new day's sequence numbers.
func (b DayBoundary) Run(t testing.TB) map[int64]bool {
	t.Helper()
	var (
		done, failed  atomic.Bool
		newDay, count atomic.Int64
		mu            sync.Mutex
		all           []issued
		wg            sync.WaitGroup
	)
	newPeriod := b.Midnight.Format("20060102")
	for w := range b.Callers {
		g := b.Gens[w%len(b.Gens)]
		wg.Go(func() {
			var mine []issued
			defer func() {
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
			for !done.Load() {
				pre := b.Clock.Now()
				n, err := g.NextNumber(context.Background(), b.Tag)
				if err != nil {
					failed.Store(true)
					t.Errorf("NextNumber: %v", err)
					return
				}
				if n.Period == newPeriod {
					newDay.Add(1)
				}
				count.Add(1)
				mine = append(mine, issued{n, pre})
			}
		})
	}
	// The driver: the nodes' time first, then the database's clock, so
	// that the database is never ahead of the nodes' time.
	for last := int64(0); !failed.Load() && (b.Clock.Now().Before(b.Midnight.Add(b.After)) || newDay.Load() < b.NewDay); {
		for count.Load() == last && !failed.Load() && b.Clock.Waiting(b.Midnight.Add(b.After)) == 0 {
			runtime.Gosched()
		}
		last = count.Load()
		b.Clock.Advance(b.Step)
		if b.SetDB != nil {
			b.SetDB(b.Clock.Now())
		}
		runtime.Gosched()
	}
	done.Store(true)
	wg.Wait()
	if failed.Load() {
		t.FailNow()
	}

	oldPeriod := b.Midnight.Add(-time.Nanosecond).Format("20060102")
	seen := map[string]bool{}
	seqs := map[string]map[int64]bool{oldPeriod: {}, newPeriod: {}}
	for _, x := range all {
		if seen[x.n.Text] {
			t.Fatalf("%s issued twice", x.n.Text)
		}
		seen[x.n.Text] = true
		if seqs[x.n.Period] == nil {
			t.Fatalf("%s: period %s, neither %s nor %s", x.n.Text, x.n.Period, oldPeriod, newPeriod)
		}
		seqs[x.n.Period][x.n.Seq] = true
		if want := fmt.Sprintf("ORD%s%06d", x.n.Period, x.n.Seq); x.n.Text != want {
			t.Fatalf("%s written, want %s", x.n.Text, want)
		}
		if x.n.Period == oldPeriod && !x.pre.Before(b.Midnight) {
			t.Errorf("%s issued by a call made at %s, after the database's midnight", x.n.Text, x.pre.Format(time.RFC3339Nano))
		}
	}
	if !seqs[oldPeriod][1] || !seqs[newPeriod][1] {
		t.Errorf("each day starts at 1: the old day's 1 %v, the new day's %v", seqs[oldPeriod][1], seqs[newPeriod][1])
	}
	t.Logf("%d numbers of the old day, %d of the new", len(seqs[oldPeriod]), len(seqs[newPeriod]))
	return seqs[newPeriod]
}
