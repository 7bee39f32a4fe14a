// Package leasetest has the helpers the tests of the machine-id leases
// (service/backend/etcdlease, service/backend/pglease and the engine's conformance suite
// in service/backend/internal/leasekit) share: a runner of the real server-rest
// (Rest), a logger writing to the test's log, polling for a condition, a
// shifted clock, and reading a metric from a /metrics page.
package leasetest

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/ctxtime"
)

// Writer writes to t.Log until the test's cleanups are over (a log line
// after that would panic).
func Writer(t testing.TB) *TestWriter {
	w := &TestWriter{t: t}
	t.Cleanup(func() { w.done.Store(true) }) // registered first: runs last
	return w
}

// TestWriter is an io.Writer to a test's log (Writer).
type TestWriter struct {
	t    testing.TB
	done atomic.Bool
}

func (w *TestWriter) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// Log is a debug-level slog logger writing to the test's log (Writer).
func Log(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(Writer(t), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Eventually polls cond every few milliseconds for up to limit.
func Eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", limit, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// MetricReaches waits until metric(name) shows want. A lease counts its
// claim or resume, and marks itself held, a moment after the service is
// up, so the first ID may come before the count.
func MetricReaches(t testing.TB, metric func(name string) string, name, want string) {
	t.Helper()
	Eventually(t, 10*time.Second, name+" = "+want, func() bool { return metric(name) == want })
}

// OffsetClock is a service.Clock: the wall time when the package was
// loaded plus Go's monotonic clock since then (so it never runs back),
// shifted by Off.
type OffsetClock struct {
	Off time.Duration
}

// clockStart is the reading OffsetClock counts from.
var clockStart = time.Now()

var _ service.Clock = OffsetClock{}

func (c OffsetClock) NowNanos() int64 {
	return clockStart.UnixNano() + int64(time.Since(clockStart)) + int64(c.Off)
}

func (c OffsetClock) WaitUntil(ctx context.Context, t int64) error {
	for {
		d := time.Duration(t - c.NowNanos())
		if d <= 0 {
			return nil
		}
		if err := ctxtime.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// MetricValue is the value of an unlabelled metric in a /metrics page, or
// "" when it is missing.
func MetricValue(page, name string) string {
	for _, line := range strings.Split(page, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}
