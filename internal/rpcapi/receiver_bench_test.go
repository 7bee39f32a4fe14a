package rpcapi

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
)

// BenchmarkReceiverGenId is the receiver's own cost per GenId, in process:
// no network, no codec, a counter for the service (which checks its
// context as the real one does). "plain" sends no timeout; "timeout" sends
// one (a ctxtime.Deadline per call); "secured" adds what server-rpc runs
// with: a token checked on every call, a quota every call takes from, an
// observer and the server's call timeout.
func BenchmarkReceiverGenId(b *testing.B) {
	const token = "vesta_bench_token_0123456789"
	svc := &benchCounter{}
	p, err := access.NewPolicy([]access.Client{{Name: "bench", Tokens: [][32]byte{access.HashToken(token)},
		Scopes: []access.Scope{access.ScopeGenId}, Rate: access.MaxRate}})
	if err != nil {
		b.Fatal(err)
	}
	g, err := access.NewGuard(access.Options{Policy: p, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		r    *Receiver
		args GenIdArgs
	}{
		{"plain", NewReceiver(svc, 10), GenIdArgs{}},
		{"timeout", NewReceiver(svc, 10), GenIdArgs{Timeout: 2 * time.Second}},
		{"secured", NewReceiver(svc, 10, WithGuard(g), WithObserver(&benchObserver{}), WithCallTimeout(10*time.Second)).
			ForPeer("127.0.0.1:1"), GenIdArgs{Timeout: 2 * time.Second, Token: token}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				var reply GenIdReply
				_ = c.r.GenId(c.args, &reply)
				if reply.Err != nil {
					b.Fatal(reply.Err)
				}
			}
		})
	}
}

// benchCounter is an intf.IdService whose GenId is a counter behind the
// context check the real service makes.
type benchCounter struct {
	intf.IdService // the other methods: not called
	n              atomic.Int64
}

func (s *benchCounter) GenId(ctx context.Context) (intf.Id, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return intf.Id(s.n.Add(1)), nil
}

// benchObserver counts as a metrics observer does: atomic adds.
type benchObserver struct{ calls, elapsed atomic.Int64 }

func (o *benchObserver) ObserveCall(_ string, _ int, _ *Error, elapsed time.Duration) {
	o.calls.Add(1)
	o.elapsed.Add(int64(elapsed))
}
