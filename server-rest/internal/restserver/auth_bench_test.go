package restserver_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
)

// BenchmarkGenIdPathAuth is BenchmarkGenIdPath with a token checked on
// every request, against auth files of 1 and of 100 clients (the digest
// is compared with every client's, in constant time).
func BenchmarkGenIdPathAuth(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			var clients []access.Client
			for i := range n {
				clients = append(clients, access.Client{Name: fmt.Sprintf("c%d", i),
					Tokens: [][32]byte{access.HashToken(fmt.Sprintf("vesta_token-%d", i))}, Scopes: []access.Scope{"genid"}})
			}
			p, err := access.NewPolicy(clients)
			require.NoError(b, err)
			g, err := access.NewGuard(access.Options{Policy: p, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(b, err)
			start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
				svc, err := restapp.Start(cfg)(ctx)
				return constService{svc}, err
			}
			srv, _ := startServerWith(b, testConfig(b), start, restserver.WithGuard(g))
			h := srv.Handler()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest(http.MethodGet, "/genid", nil)
				req.Header.Set("Authorization", fmt.Sprintf("Bearer vesta_token-%d", n-1))
				w := &discardWriter{h: http.Header{}}
				for pb.Next() {
					clear(w.h)
					h.ServeHTTP(w, req)
				}
			})
		})
	}
}
