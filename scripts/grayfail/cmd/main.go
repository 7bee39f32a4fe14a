// Command grayfail prints what the RPC client does under gray failure,
// against real server-rpc processes on 127.0.0.1, next to the targets of
// docs/rpc.md. Run it through scripts/bench-grayfail.sh.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/vesta-go/vesta/scripts/grayfail"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "grayfail:", err)
		os.Exit(1)
	}
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

func run() error {
	dir, err := os.MkdirTemp("", "grayfail")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := grayfail.Build(dir)
	if err != nil {
		return err
	}
	e := &grayfail.Env{Bin: bin, Dir: dir}

	s, err := e.Stopped(64, 3*time.Second)
	if err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	fmt.Printf("SIGSTOPped server, 64 callers, 1 ms deadline, 3 s: %d calls, slowest %v (deadline + %v; target <= +50ms: %s), Close %v, goroutines left %d (%s)\n",
		s.Calls, s.Slowest.Round(time.Microsecond), s.OverDeadline.Round(time.Microsecond),
		verdict(s.OverDeadline <= 50*time.Millisecond), s.Close.Round(time.Microsecond), s.Goroutines,
		verdict(s.Goroutines <= 0 && s.Close <= time.Second))

	bc, err := e.BufferedClose()
	if err != nil {
		return fmt.Errorf("buffered close: %w", err)
	}
	fmt.Printf("buffered client (pool 1, 2000/1000), server SIGSTOPped mid-refill: Close %v (target <= 1s: %s)\n",
		bc.Round(time.Microsecond), verdict(bc <= time.Second))

	for _, ct := range []time.Duration{500 * time.Millisecond, 2 * time.Second} {
		f, err := e.Failover(16, ct, 4*ct+time.Second)
		if err != nil {
			return fmt.Errorf("failover: %w", err)
		}
		ratio := 100 * float64(f.AfterOK) / float64(max(f.After, 1))
		fmt.Printf("A SIGSTOPped, B healthy, 16 callers, call timeout %v: %d calls, %d failed; after the first call timeout %d/%d succeeded = %.2f%% (target >= 99%%: %s); duplicates %d\n",
			ct, f.Calls, f.Failed, f.AfterOK, f.After, ratio, verdict(ratio >= 99), f.Duplicates)
	}

	r, err := e.Restart(16, time.Second)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	fmt.Printf("only server SIGTERMed, restarted 1 s later, 16 callers: %d calls, %d failed; first success %v after it listened (target <= 1s: %s); duplicates %d\n",
		r.Calls, r.Failed, r.FirstOK.Round(time.Microsecond), verdict(r.FirstOK >= 0 && r.FirstOK <= time.Second), r.Duplicates)

	ro, err := e.Rolling(16, 500*time.Millisecond)
	if err != nil {
		return fmt.Errorf("rolling: %w", err)
	}
	fmt.Printf("kill -9 A, restart A, kill -9 B, 16 callers, call timeout 500ms: %d calls, %d failed, %d while a server was up after the first call timeout (target 0: %s) %s; duplicates %d\n",
		ro.Calls, ro.Failed, ro.FailedWhileUp, verdict(ro.FailedWhileUp == 0), ro.LastErr, ro.Duplicates)

	w, err := e.Wire()
	if err != nil {
		return fmt.Errorf("wire: %w", err)
	}
	fmt.Printf("100 KB tag: a %d-character error; GenIds(5) past its deadline: %d IDs, %q; MakeId Set 0x20: %q\n",
		w.HugeTagErrLen, w.PastDeadlineIds, w.PastDeadlineErr, w.UnknownBitsErr)
	return nil
}
