package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/vesta-go/vesta/server-rpc/rpcapi"
	"github.com/vesta-go/vesta/service/config"
	"github.com/vesta-go/vesta/service/segment"
)

// segments is the segment mode of one run: a Generator, or nil when the
// configuration turns segment mode off.
type segments struct{ g *segment.Generator }

// openSegments opens segment mode as configured (segmentStore,
// segmentDSN, segmentTags). Off is not an error: SegmentNextIds then
// answers rpcapi.ErrSegmentOff.
func openSegments(ctx context.Context, cfg config.Config, log *slog.Logger) (segments, error) {
	g, err := segment.Open(ctx, cfg.Segment)
	if errors.Is(err, segment.ErrDisabled) {
		log.Info("vesta: segment mode off (segmentStore off)")
		return segments{}, nil
	}
	if err != nil {
		return segments{}, fmt.Errorf("segment mode: %w", err)
	}
	log.Info("vesta: segment mode on", "store", cfg.Segment.Store, "tags", g.Tags())
	return segments{g}, nil
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
