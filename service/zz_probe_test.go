package service_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

func TestProbeRate(t *testing.T) {
	for _, p := range service.Populators() {
		for _, typ := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
			svc, err := service.New(context.Background(), service.Settings{Populator: p, Type: typ, NoDataDir: true, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			var wg sync.WaitGroup
			const G, N = 64, 20000
			out := make([][]int64, G)
			for g := 0; g < G; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ids := make([]int64, 0, N)
					for i := 0; i < N; i++ {
						id, err := svc.GenId(context.Background())
						if err != nil {
							panic(err)
						}
						ids = append(ids, id)
					}
					out[g] = ids
				}()
			}
			wg.Wait()
			d := time.Since(start)
			t.Logf("%s %s: %v  %.0f ids/s waits=%d", p, typ, d, float64(G*N)/d.Seconds(), svc.Stats().ExhaustionWaits)
			svc.Close()
		}
	}
}
