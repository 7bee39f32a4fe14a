package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// FuzzMarkFile puts any content into the data dir's time high-water mark
// file and starts a service on it with a fake clock (at testStart; a wait
// for the clock moves it at once). New must return promptly, and:
//   - content that is no decimal integer, or a mark outside 0..the end of
//     the layout's time field, is refused with ErrCorruptMark naming the
//     file;
//   - a valid mark more than maxClockBackwardWait (5 s) ahead of the clock
//     is refused with intf.ErrClockBehind;
//   - a valid mark less than 4 s ahead (or behind) starts the service, and
//     its first ID lies in a time unit after the mark's;
//   - nothing else: no panic, no other error.
func FuzzMarkFile(f *testing.F) {
	now := testStart.UnixMilli()
	for _, s := range []string{
		"", "\n", " ", "0", "0\n", "-0", "+1", "-1", "1e3", "0x10", "１２", "1 2",
		strconv.FormatInt(now, 10), strconv.FormatInt(now, 10) + "\n", " \t" + strconv.FormatInt(now-1, 10) + "\r\n",
		strconv.FormatInt(now+3000, 10), strconv.FormatInt(now+5000, 10), strconv.FormatInt(now+10_000, 10),
		strconv.FormatInt(now+86_400_000, 10), strconv.FormatInt(intf.DefaultEpochMillis-1, 10),
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "99999999999999999999",
		"\x00", "\xff\xfe", strings.Repeat("9", 1000),
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, content []byte, typ uint8) {
		tt := intf.IdType(typ % 2)
		l, err := tt.Layout()
		if err != nil {
			t.Fatal(err)
		}
		unitMs := l.Unit.Milliseconds()
		endMs := intf.DefaultEpochMillis + (l.Time.Max()+1)*unitMs

		dir := t.TempDir()
		path := filepath.Join(dir, "highwater")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		clk := newFakeClock(testStart)
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		defer cancel()
		type result struct {
			svc *service.Service
			err error
		}
		done := make(chan result, 1)
		go func() {
			svc, err := service.New(ctx, service.Settings{DataDir: dir, Type: tt, Clock: clk, Logger: discardLog})
			done <- result{svc, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(15 * time.Second):
			t.Fatalf("New hangs on mark %q", content)
		}
		if r.svc != nil {
			defer r.svc.Close()
		}
		if errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("New timed out on mark %q: %v", content, r.err)
		}

		ms, perr := strconv.ParseInt(strings.TrimSpace(string(content)), 10, 64)
		switch {
		case perr != nil || ms < 0 || ms > endMs:
			if !errors.Is(r.err, service.ErrCorruptMark) {
				t.Fatalf("mark %q (%s): New = %v, want ErrCorruptMark", content, tt, r.err)
			}
			if !strings.Contains(r.err.Error(), path) {
				t.Fatalf("mark %q: the error does not name %s: %v", content, path, r.err)
			}
		case ms > now+6000:
			if !errors.Is(r.err, intf.ErrClockBehind) {
				t.Fatalf("mark %q, %d ms ahead of the clock: New = %v, want ErrClockBehind", content, ms-now, r.err)
			}
		case ms < now+4000:
			if r.err != nil {
				t.Fatalf("mark %q (%s), %d ms ahead of the clock: New: %v", content, tt, ms-now, r.err)
			}
		default: // near maxClockBackwardWait: either
			if r.err != nil && !errors.Is(r.err, intf.ErrClockBehind) {
				t.Fatalf("mark %q: New: %v", content, r.err)
			}
		}
		if r.err != nil {
			return
		}
		id, err := r.svc.GenId(ctx)
		if err != nil {
			t.Fatalf("mark %q: GenId: %v", content, err)
		}
		markUnit := (ms - intf.DefaultEpochMillis) / unitMs
		if ms < intf.DefaultEpochMillis {
			markUnit = -1
		}
		if unit := intf.Id(id).Fields().Time; unit <= markUnit {
			t.Fatalf("mark %q (unit %d): first ID %d has time unit %d, not after the mark", content, markUnit, id, unit)
		}
	})
}
