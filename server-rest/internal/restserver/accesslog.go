package restserver

import (
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/service/ctxtime"
)

// withAccessLog wraps the server's handler with the access log: at debug
// level, one line per request with its method, path, status, duration,
// remote address and body size. No header is logged (an Authorization
// header holds a secret) and no query string (a client may put anything in
// it): the path says what was asked. Below debug it costs one level check.
func (s *Server) withAccessLog(e *echo.Echo) http.Handler { return accessLogged{e, s.log, s.serveHTTP} }

// accessLogged is the server's handler (serveHTTP: Echo, or a static
// route) with the access log; Echo's own methods (Routes) stay reachable.
type accessLogged struct {
	*echo.Echo
	log   *slog.Logger
	serve http.HandlerFunc
}

func (a accessLogged) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !a.log.Enabled(ctx, slog.LevelDebug) {
		a.serve(w, r)
		return
	}
	start := ctxtime.Monotonic()
	rec := &recorder{ResponseWriter: w}
	a.serve(rec, r)
	a.log.LogAttrs(ctx, slog.LevelDebug, "rest: request",
		slog.String("method", r.Method), slog.String("path", r.URL.EscapedPath()), slog.Int("status", rec.status()),
		slog.Duration("duration", ctxtime.Monotonic()-start), slog.String("remote", r.RemoteAddr), slog.Int64("bytes", rec.n))
}

// recorder notes the status and size of a response on its way.
type recorder struct {
	http.ResponseWriter
	code int
	n    int64
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController (Echo's Flush) reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// status is the status sent; 200 for a handler that wrote nothing.
func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}
