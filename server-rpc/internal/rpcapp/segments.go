package rpcapp

import (
	"context"
	"errors"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/runtime"
	"github.com/vesta-go/vesta/intf"
)

// NewRuntime is the runtime of cfg (app.RuntimeOptions): the ID service,
// and segment mode — off, open, or, when its store could not be reached
// at start, opened in the background while SegmentNextIds answers
// intf.ErrUnavailable (code 6, on which clients try the next server).
func NewRuntime(cfg config.Config) *runtime.Runtime {
	o := app.RuntimeOptions(cfg)
	o.SegmentAnswer = "SegmentNextIds: code 6"
	return runtime.New(o)
}

// segmentDoor is the runtime's segment mode as the receiver serves it:
// each call asks the runtime for it, and off is rpcapi.ErrSegmentOff.
type segmentDoor struct{ rt *runtime.Runtime }

// get is segment mode, or the error of a segment call while it is not
// open (runtime.Runtime.Segments): off, the store being retried (only
// unavailable on the wire, without the retry's error: the client then
// tries the next server), not open yet, or stopping.
func (d segmentDoor) get() (runtime.Segments, error) {
	seg, err := d.rt.Segments()
	if errors.Is(err, runtime.ErrSegmentsOff) {
		return nil, rpcapi.ErrSegmentOff
	}
	return seg, err
}

func (d segmentDoor) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	seg, err := d.get()
	if err != nil {
		return nil, err
	}
	return seg.NextIds(ctx, tag, n)
}

// NextRange serves SegmentRange.
func (d segmentDoor) NextRange(ctx context.Context, tag string, size int64) (intf.SegmentRange, error) {
	seg, err := d.get()
	if err != nil {
		return intf.SegmentRange{}, err
	}
	return seg.NextRange(ctx, tag, size)
}

// Step caps a quota's range of the tag by its step.
func (d segmentDoor) Step(ctx context.Context, tag string) (int64, error) {
	seg, err := d.get()
	if err != nil {
		return 0, err
	}
	return seg.Step(ctx, tag)
}

// NextNumber serves SegmentNextNumber.
func (d segmentDoor) NextNumber(ctx context.Context, tag string) (intf.SegmentNumber, error) {
	seg, err := d.get()
	if err != nil {
		return intf.SegmentNumber{}, err
	}
	return seg.NextNumber(ctx, tag)
}

// ReceiverOptions are the receiver's options of cfg: the call timeout,
// the range cap, and rt's segment mode unless it is off.
func ReceiverOptions(cfg config.Config, rt *runtime.Runtime) []rpcapi.ReceiverOption {
	opts := []rpcapi.ReceiverOption{rpcapi.WithCallTimeout(cfg.CallTimeout), rpcapi.WithMaxRange(cfg.SegmentMaxRange)}
	if _, err := rt.Segments(); !errors.Is(err, runtime.ErrSegmentsOff) {
		opts = append(opts, rpcapi.WithSegments(segmentDoor{rt}))
	}
	return opts
}
