package restserver_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// nullWriter is a ResponseWriter that keeps nothing: the handler's own
// cost, without a connection.
type nullWriter struct{ h http.Header }

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nullWriter) WriteHeader(int)             {}

// BenchmarkHandleGenId measures server-rest's handler answering GET
// /genid with no connection (a writer that keeps nothing), beside a bare
// handler writing a constant: what the handler path adds per request.
func BenchmarkHandleGenId(b *testing.B) {
	run := func(b *testing.B, h http.Handler) {
		req, err := http.NewRequest(http.MethodGet, "/genid", nil)
		require.NoError(b, err)
		req.RemoteAddr = "127.0.0.1:5000"
		b.ReportAllocs()
		b.SetParallelism(32)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			w := &nullWriter{h: http.Header{}}
			for pb.Next() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
	b.Run("rest", func(b *testing.B) {
		srv := newServer(testConfig(b), nil)
		require.NoError(b, srv.Start(context.Background()))
		b.Cleanup(func() { _ = srv.Close() })
		run(b, srv.Handler())
	})
	b.Run("bare", func(b *testing.B) {
		body := []byte("1940201739163701249")
		run(b, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
			_, _ = w.Write(body)
		}))
	})
}
