package rpcapp

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// server-rpc's segment mode serves a period tag through the receiver's
// SegmentNextNumber.
func TestSegmentsServeNumbers(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := config.Config{Service: service.Settings{Logger: log},
		Segment: config.Segment{Store: segspec.SQLite, DataDir: t.TempDir()}}
	st, err := stores.OpenStore(ctx, stores.Config{Store: segspec.SQLite, DataDir: cfg.Segment.DataDir})
	require.NoError(t, err)
	ps, err := segstore.PeriodStoreOf(st)
	require.NoError(t, err)
	require.NoError(t, ps.CreatePeriodTag(ctx, segstore.PeriodTag{Tag: "inv", Group: segstore.GroupYear, Format: "INV{yyyy}-{seq:4}", Step: 10}))
	require.NoError(t, st.Close())

	rt := segmentRuntime(t, log, func(ctx context.Context) (*segment.Generator, error) { return app.OpenSegments(ctx, cfg) }, time.Second)
	r := rpcapi.NewReceiver(nil, 10, ReceiverOptions(cfg, rt)...)
	var reply rpcapi.SegmentNumberReply
	require.NoError(t, r.SegmentNextNumber(rpcapi.SegmentNumberArgs{Tag: "inv"}, &reply))
	require.Nil(t, reply.Err)
	year := time.Now().UTC().Format("2006")
	assert.Equal(t, "INV"+year+"-0001", reply.Number.Text)
	assert.Equal(t, year, reply.Number.Period)
	assert.Equal(t, int64(1), reply.Number.Seq)

	reply = rpcapi.SegmentNumberReply{}
	require.NoError(t, r.SegmentNextNumber(rpcapi.SegmentNumberArgs{Tag: "nope"}, &reply))
	require.NotNil(t, reply.Err)
	assert.Equal(t, rpcapi.CodeUnknownTag, reply.Err.Code)
}
