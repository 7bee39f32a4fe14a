// Command segload takes segment IDs from vesta-go RPC servers as fast as it
// can, through the Go client, and reports the rate per second: with
// --ranges from ranges the client holds (client.WithSegmentRanges), else
// one call per ID. scripts/bench-segment-range.sh runs it for
// docs/benchmarks.md, and the end-to-end test of client-side ranges runs
// several at once (--out) to check that no ID is handed out twice.
//
//	go run ./scripts/segload --addrs 127.0.0.1:20880 --tag order --ranges --duration 10s
//
// It prints one JSON object: IDs in all, per second, how often a caller
// waited for a range, the errors, and whether every goroutine's IDs
// increased.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/client"
)

type result struct {
	Mode       string  `json:"mode"`
	Goroutines int     `json:"goroutines"`
	Seconds    float64 `json:"seconds"`
	Ids        int64   `json:"ids"`
	Rate       float64 `json:"rate"`
	// PerSecond are the IDs taken in each whole second of the run.
	PerSecond []int64 `json:"perSecond"`
	// Waits counts the calls that found the ranges used up and waited for
	// a load (--ranges); Step is the size of the last range.
	Waits int64 `json:"waits"`
	Step  int64 `json:"step"`
	// Errors counts failed calls; FirstError is the first one's text.
	Errors     int64  `json:"errors"`
	FirstError string `json:"firstError,omitempty"`
	// NotIncreasing counts IDs not above the same goroutine's previous one.
	NotIncreasing int64 `json:"notIncreasing"`
}

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "segload:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("segload", flag.ContinueOnError)
	addrs := fs.String("addrs", "127.0.0.1:20880", "comma-separated server-rpc addresses, in order of preference")
	tag := fs.String("tag", "order", "segment tag")
	duration := fs.Duration("duration", 10*time.Second, "how long to take IDs")
	goroutines := fs.Int("goroutines", 64, "callers")
	ranges := fs.Bool("ranges", false, "serve from ranges the client holds (WithSegmentRanges)")
	maxRange := fs.Int64("max-range", 0, "the largest range with --ranges (0: the default, 10,000,000)")
	limit := fs.Int64("limit", 0, "stop each goroutine after this many IDs (0: no limit)")
	pace := fs.Int64("rate", 0, "IDs per second per goroutine at most (0: as fast as it can)")
	out := fs.String("out", "", "write every ID to this file, 8 bytes little-endian each (for duplicate checks)")
	untilEOF := fs.Bool("until-eof", false, "stop also when stdin closes (a test ends the run once it has seen what it needs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *goroutines < 1 || *duration <= 0 {
		return errors.New("--goroutines and --duration must be positive")
	}
	opts := []client.Option{client.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))}
	mode := "per-call"
	if *ranges {
		opts = append(opts, client.WithSegmentRanges(*maxRange))
		mode = "ranges"
	}
	c, err := client.New(strings.Split(*addrs, ","), opts...)
	if err != nil {
		return err
	}
	defer c.Close()

	secs := int(*duration/time.Second) + 2
	perSecond := make([]atomic.Int64, secs)
	var errs, notIncreasing atomic.Int64
	var firstErr atomic.Pointer[string]
	var w *idWriter
	if *out != "" {
		if w, err = newIdWriter(*out); err != nil {
			return err
		}
	}
	// How often a goroutine looks at the clock: every 1024 IDs from local
	// ranges (a clock read costs more than an ID), every ID per call.
	mask := int64(1023)
	if !*ranges {
		mask = 0
	}
	start := time.Now()
	end := start.Add(*duration)
	var closed atomic.Bool // stdin closed, with --until-eof
	if *untilEOF {
		go func() { _, _ = io.Copy(io.Discard, stdin); closed.Store(true) }()
	}
	var wg sync.WaitGroup
	for range *goroutines {
		wg.Go(func() {
			ctx := context.Background()
			var last, n, pending int64
			var buf []int64
			flush := func(now time.Time) {
				if s := int(now.Sub(start) / time.Second); s < secs {
					perSecond[s].Add(pending)
				}
				pending = 0
				if w != nil {
					w.write(buf)
					buf = buf[:0]
				}
			}
			for {
				id, err := c.NextSegmentId(ctx, *tag)
				if err != nil {
					if errs.Add(1) == 1 {
						s := err.Error()
						firstErr.Store(&s)
					}
					time.Sleep(time.Millisecond) // every server down: do not spin
				} else {
					if id <= last {
						notIncreasing.Add(1)
					}
					last = id
					n++
					pending++
					if w != nil {
						buf = append(buf, id)
					}
				}
				if n&mask == 0 || err != nil {
					now := time.Now()
					flush(now)
					if now.After(end) || closed.Load() || (*limit > 0 && n >= *limit) {
						return
					}
				}
				if *limit > 0 && n >= *limit {
					flush(time.Now())
					return
				}
				if *pace > 0 && n%64 == 0 {
					if d := time.Until(start.Add(time.Duration(n) * time.Second / time.Duration(*pace))); d > 0 {
						flush(time.Now())
						time.Sleep(d)
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if w != nil {
		if err := w.close(); err != nil {
			return err
		}
	}
	r := result{Mode: mode, Goroutines: *goroutines, Seconds: elapsed.Seconds(), Errors: errs.Load(), NotIncreasing: notIncreasing.Load()}
	for i := range perSecond {
		v := perSecond[i].Load()
		r.Ids += v
		if i < int(elapsed/time.Second) {
			r.PerSecond = append(r.PerSecond, v)
		}
	}
	r.Rate = float64(r.Ids) / elapsed.Seconds()
	if st, ok := c.SegmentStatus(*tag); ok {
		r.Waits, r.Step = st.Waits, st.Step
	}
	if s := firstErr.Load(); s != nil {
		r.FirstError = *s
	}
	return json.NewEncoder(stdout).Encode(r)
}

// idWriter writes IDs to a file from many goroutines.
type idWriter struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	err error
}

func newIdWriter(path string) (*idWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &idWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (w *idWriter) write(ids []int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b [8]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint64(b[:], uint64(id))
		if _, err := w.w.Write(b[:]); err != nil && w.err == nil {
			w.err = err
		}
	}
}

func (w *idWriter) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}
