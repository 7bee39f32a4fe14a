package main

import (
	"context"
	"fmt"

	"github.com/vesta-go/vesta/internal/app"
	"github.com/vesta-go/vesta/server-rpc/rpcapi"
	"github.com/vesta-go/vesta/service/config"
	"github.com/vesta-go/vesta/service/segment"
)

// segments is the segment mode of one run: a Generator, or nil when the
// configuration turns segment mode off.
type segments struct{ g *segment.Generator }

// openSegments opens segment mode as configured (app.OpenSegments). Off
// is not an error: SegmentNextIds then answers rpcapi.ErrSegmentOff.
func openSegments(ctx context.Context, cfg config.Config) (segments, error) {
	g, err := app.OpenSegments(ctx, cfg)
	return segments{g}, err
}

// receiverOptions serve the Generator, if there is one. (A nil
// *segment.Generator must not become a non-nil intf.SegmentService.)
func (s segments) receiverOptions() []rpcapi.ReceiverOption {
	if s.g == nil {
		return nil
	}
	return []rpcapi.ReceiverOption{rpcapi.WithSegments(s.g)}
}

// close closes the Generator, if there is one.
func (s segments) close() error {
	if s.g == nil {
		return nil
	}
	if err := s.g.Close(); err != nil {
		return fmt.Errorf("closing segment mode: %w", err)
	}
	return nil
}
