package segbuf

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

var sink int64

// instant is a Policy whose loads are instant ranges of 1<<20 IDs.
func instant(_ testing.TB) *Buffer {
	p := &Policy{MaxStep: 1 << 20, WaitTimeout: time.Second, RetryInterval: time.Second, Now: time.Now,
		Go: func(f func()) bool { go f(); return true }, Closed: func() bool { return false },
		Exhausted: func(string, error, time.Duration) error { return context.DeadlineExceeded }}
	var next atomic.Int64
	return New("t", func(int64) (Range, int64, error) {
		end := next.Add(1 << 20)
		return Range{Start: end - 1<<20, End: end}, 1, nil
	}, p)
}

func BenchmarkTryNext(b *testing.B) {
	buf := instant(b)
	ctx := context.Background()
	for b.Loop() {
		id, err := buf.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		sink = id
	}
}

func BenchmarkAtomic(b *testing.B) {
	var c atomic.Int64
	for b.Loop() {
		sink = c.Add(1)
	}
}

func BenchmarkTryNextOnly(b *testing.B) {
	var set Set
	set.Add("t", func() *Buffer { return instant(b) })
	set.Find("t").Next(context.Background())
	for b.Loop() {
		id, took := set.TryNext("t")
		if took != Got {
			if took == Dry {
				id, _ = set.Find("t").Next(context.Background())
			} else {
				set.Kick("t")
			}
		}
		sink = id
	}
}

func BenchmarkTake(b *testing.B) {
	buf := instant(b)
	var err error
	var id int64
	for b.Loop() {
		if id, err = Take(buf, TakeSlow); err != nil {
			break
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	sink = id
}
