package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

// A door runs over the runtime: it serves at once, asks the runtime for
// the ID service (ErrStarting until it is constructed) and segment mode
// (off here), and drains when the run ends, after the runtime has said
// stopping; the runtime then closes the service.
func Example() {
	quiet := slog.New(slog.DiscardHandler)
	var svc *service.Service
	rt := runtime.New(runtime.Options{
		Start: func(ctx context.Context) (runtime.Service, error) {
			s, err := service.New(ctx, service.Settings{
				Machine: 5, GenMethod: intf.GenMethodCentral, Type: intf.MaxPeak, NoDataDir: true, Logger: quiet,
			})
			if err != nil {
				return nil, err
			}
			svc = s
			return s, nil
		},
		Logger: quiet,
	})
	_, err := rt.Service()
	fmt.Println("before the start:", rt.Health().Status, "|", err)

	ctx, stop := context.WithCancel(context.Background())
	drained := make(chan struct{})
	err = rt.Run(ctx, runtime.Door{
		Name:  "example",
		Serve: func() error { <-drained; return nil }, // a listener, say
		Ready: func() {
			s, _ := rt.Service()
			_, err := s.GenId(ctx)
			fmt.Println("ready:", rt.Health().Status, "| GenId error:", err)
			_, err = rt.Segments()
			fmt.Println("segments:", errors.Is(err, runtime.ErrSegmentsOff))
			stop() // SIGTERM, say
		},
		Drain: func(context.Context) error {
			fmt.Println("draining:", rt.Health().Status)
			close(drained)
			return nil
		},
	})
	fmt.Println("run:", err)
	_, err = svc.GenId(context.Background())
	fmt.Println("after the run:", errors.Is(err, intf.ErrClosed))
	// Output:
	// before the start: starting | id service is starting (claiming its machine id, or waiting for the clock to pass the time high-water mark): retry shortly
	// ready: ready | GenId error: <nil>
	// segments: true
	// draining: stopping
	// run: <nil>
	// after the run: true
}
