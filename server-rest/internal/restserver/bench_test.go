package restserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
)

// discardWriter is a ResponseWriter that keeps nothing, so that the
// benchmark measures the handler path, not a recorder.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkHandler runs requests through the whole Echo stack (routing,
// metrics, Recover, body limit, handler, service) without the network.
// /segment/bench runs segment mode on SQLite in a temp dir.
func BenchmarkHandler(b *testing.B) {
	for _, path := range []string{"/genid", "/genid?count=1000", "/makeid?time=1&seq=2", "/expid?id=2705126582500361294",
		"/segment/bench", "/segment/bench?count=1000"} {
		b.Run(path, func(b *testing.B) {
			srv, _ := startServer(b, testConfig(b, "--segment-tags", "bench"))
			h := srv.Handler()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				w := &discardWriter{h: http.Header{}}
				for pb.Next() {
					clear(w.h)
					h.ServeHTTP(w, req)
				}
			})
		})
	}
}

// constService answers GenId without the populator, so that a benchmark
// measures the HTTP path rather than the bit budget (2^20 IDs per second).
type constService struct{ restserver.Service }

func (constService) GenId(context.Context) (intf.Id, error) { return 2705126582500361294, nil }

// BenchmarkGenIdPath is the /genid path with the ID service taken out.
func BenchmarkGenIdPath(b *testing.B) {
	start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
		svc, err := restapp.Start(cfg)(ctx)
		return constService{svc}, err
	}
	srv, _ := startServerWith(b, testConfig(b), start)
	h := srv.Handler()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := httptest.NewRequest(http.MethodGet, "/genid", nil)
		w := &discardWriter{h: http.Header{}}
		for pb.Next() {
			clear(w.h)
			h.ServeHTTP(w, req)
		}
	})
}
