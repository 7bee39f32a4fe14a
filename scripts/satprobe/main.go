// Command satprobe measures the embedded service at saturation with nothing
// else in the process: goroutines call GenId in a loop for a window, and it
// prints, per populator, type and number of goroutines, the share of the
// bit budget reached, the process's CPU per wall second (rusage), the
// errors and the slowest call, so the cost of issuing and of waiting for
// the next unit can be read apart from a harness's own work (a harness that
// keeps every ID spends more than the service here; see
// docs/benchmarks.md). Each goroutine counts its own IDs and reads the
// clock once per 64 calls, as a peer harness (peerbench) does.
// With -keep it also keeps every ID as that harness does, in a slice of
// its own that grows by copying, and times the longest growth: a caller
// that copies calls nobody meanwhile, and a single caller's pause longer
// than the catch-up window costs budget that no generator can serve.
//
//	go run ./scripts/satprobe                     # the whole table, 4 s per case
//	go run ./scripts/satprobe -keep -timed=false -type min-granularity -goroutines 1
//	go run ./scripts/satprobe -type min-granularity -populator lock -goroutines 1 -window 2s
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// quiet drops the service's warning about running without a data dir.
var quiet = slog.New(slog.DiscardHandler)

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// result is one case's figures.
type result struct {
	budget, cores float64
	errs          int64
	slowest       time.Duration
	pause         time.Duration // the longest growth of a kept slice (-keep)
}

func main() {
	types := flag.String("type", "max-peak,min-granularity", "types, comma-separated")
	pops := flag.String("populator", strings.Join(service.Populators(), ","), "populators, comma-separated")
	goroutines := flag.String("goroutines", "1,64", "numbers of callers, comma-separated")
	window := flag.Duration("window", 4*time.Second, "how long each case calls")
	timed := flag.Bool("timed", true, "time every call for the slowest (two clock reads per call: CPU figures then include them)")
	keep := flag.Bool("keep", false, "keep every ID in a growing slice per goroutine, as the check's harness does, and print the longest growth")
	profile := flag.String("cpuprofile", "", "write a CPU profile of all the cases to this file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	pauseHead, pauseRule := "", ""
	if *keep {
		pauseHead, pauseRule = " longest slice growth |", "---|"
	}
	fmt.Println("| type/populator | goroutines | budget | cores | errors | slowest call |" + pauseHead)
	fmt.Println("|---|---|---|---|---|---|" + pauseRule)
	for _, tn := range strings.Split(*types, ",") {
		typ, err := intf.ParseIdType(tn)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for _, pop := range strings.Split(*pops, ",") {
			for _, gs := range strings.Split(*goroutines, ",") {
				g, err := strconv.Atoi(gs)
				if err != nil || g < 1 {
					fmt.Fprintf(os.Stderr, "goroutines: %q is not a positive number\n", gs)
					os.Exit(2)
				}
				r, err := run(typ, pop, g, *window, *timed, *keep)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				slowest := "-"
				if *timed {
					slowest = r.slowest.Round(time.Millisecond).String()
				}
				pause := ""
				if *keep {
					pause = " " + r.pause.Round(100*time.Microsecond).String() + " |"
				}
				fmt.Printf("| %s/%s | %d | %.1f%% | %.3f | %d | %s |%s\n", typ, pop, g, r.budget, r.cores, r.errs, slowest, pause)
			}
		}
	}
}

// run measures one case on a fresh service.
func run(typ intf.IdType, pop string, goroutines int, window time.Duration, timed, keep bool) (result, error) {
	ctx := context.Background()
	svc, err := service.New(ctx, service.Settings{Type: typ, Populator: pop, NoDataDir: true, Logger: quiet})
	if err != nil {
		return result{}, err
	}
	defer svc.Close()
	l, _ := typ.Layout()
	budget := float64(l.Seq.Max()+1) * float64(time.Second/l.Unit)
	counts := make([]int64, goroutines)
	errs := make([]int64, goroutines)
	slowest := make([]time.Duration, goroutines)
	pauses := make([]time.Duration, goroutines)
	deadline := time.Now().Add(window)
	c0, t0 := cpu(), time.Now()
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Go(func() {
			var kept []intf.Id
			if keep {
				kept = make([]intf.Id, 0, 1<<16) // as the harness starts
			}
			for i := 0; ; i++ {
				if i&63 == 0 && time.Now().After(deadline) {
					return
				}
				var start time.Time
				if timed {
					start = time.Now()
				}
				id, err := svc.GenId(ctx)
				if timed {
					slowest[w] = max(slowest[w], time.Since(start))
				}
				if err != nil {
					errs[w]++
					continue
				}
				counts[w]++
				if keep {
					if len(kept) == cap(kept) { // this append copies: time it
						t := time.Now()
						kept = append(kept, id)
						pauses[w] = max(pauses[w], time.Since(t))
					} else {
						kept = append(kept, id)
					}
				}
			}
		})
	}
	wg.Wait()
	el, c := time.Since(t0).Seconds(), cpu()-c0
	var r result
	var n int64
	for w := range goroutines {
		n += counts[w]
		r.errs += errs[w]
		r.slowest = max(r.slowest, slowest[w])
		r.pause = max(r.pause, pauses[w])
	}
	r.budget = 100 * float64(n) / el / budget
	r.cores = c.Seconds() / el
	return r, nil
}
