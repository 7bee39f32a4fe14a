package restserver

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/intf"
)

// Content types, as header values shared by every response (net/http does
// not modify them), so that setting one allocates nothing.
var (
	textPlain = []string{echo.MIMETextPlainCharsetUTF8}
	appJSON   = []string{echo.MIMEApplicationJSON}
)

// timeLayout is RFC 3339 in UTC with milliseconds, e.g. 2026-10-14T06:16:45.000Z.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// wantsJSON reports whether the Accept header asks for application/json
// (with a q above 0). Anything else gets text/plain.
func wantsJSON(r *http.Request) bool {
	for _, line := range r.Header[echo.HeaderAccept] { // canonical key: no Values lookup cost
		for part := range strings.SplitSeq(line, ",") {
			mediaType, params, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mediaType), echo.MIMEApplicationJSON) && !qZero(params) {
				return true
			}
		}
	}
	return false
}

// qZero reports whether media type parameters say q=0 ("not acceptable").
func qZero(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(k, "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}

// flushAt is the size of the pooled buffers responses are built in; a
// larger batch is streamed in pieces of about this size.
const flushAt = 32 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, flushAt+64); return &b }}

// bodyWriter builds a 200 response in a pooled buffer. A body that fits
// the buffer is sent with a Content-Length; a larger one is streamed.
type bodyWriter struct {
	c       echo.Context
	ctype   []string
	bp      *[]byte
	b       []byte
	started bool
	err     error
}

func newBodyWriter(c echo.Context, ctype []string) bodyWriter {
	bp := bufPool.Get().(*[]byte)
	return bodyWriter{c: c, ctype: ctype, bp: bp, b: (*bp)[:0]}
}

// maybeFlush sends the buffer once it holds flushAt bytes.
func (w *bodyWriter) maybeFlush() {
	if len(w.b) < flushAt || w.err != nil {
		return
	}
	if !w.started {
		w.started = true
		w.header(-1)
	}
	_, w.err = w.c.Response().Write(w.b)
	w.b = w.b[:0]
}

func (w *bodyWriter) header(length int) {
	resp := w.c.Response()
	h := resp.Header()
	h[echo.HeaderContentType] = w.ctype
	// net/http sets the length of a small body itself (below its 2 KB
	// chunking buffer); say it for larger ones, so they are not chunked.
	if length >= 2048 {
		h[echo.HeaderContentLength] = []string{strconv.Itoa(length)}
	}
	resp.WriteHeader(http.StatusOK)
}

// finish sends what is left and returns the buffer to the pool.
func (w *bodyWriter) finish() error {
	if w.err == nil {
		if !w.started {
			w.header(len(w.b))
		}
		_, w.err = w.c.Response().Write(w.b)
	}
	*w.bp = w.b[:0]
	if cap(w.b) <= flushAt+64 {
		bufPool.Put(w.bp)
	}
	return w.err
}

// writeId sends one ID: its decimal as text/plain (no newline, as Vesta:
// the body parses as a number), or {"id":"..."} as JSON, which ends with a
// newline as every JSON body does (Echo's encoder writes one).
func writeId[T intf.Id | int64](c echo.Context, id T, asJSON bool, form idForm) error {
	if asJSON {
		w := newBodyWriter(c, appJSON)
		w.b = append(w.b, `{"id":"`...)
		w.b = appendId(w.b, int64(id), form)
		w.b = append(w.b, "\"}\n"...)
		return w.finish()
	}
	w := newBodyWriter(c, textPlain)
	w.b = appendId(w.b, int64(id), form)
	return w.finish()
}

// appendId appends id in form: the signed decimal when form is nil. Every
// form is made of characters JSON writes as they are.
func appendId(b []byte, id int64, form idForm) []byte {
	if form == nil {
		return strconv.AppendInt(b, id, 10)
	}
	return append(b, form(intf.Id(id))...)
}

// writeIds sends a batch: one ID per line as text/plain, or a JSON
// array of strings and a newline; decimal unless form says otherwise.
func writeIds[T intf.Id | int64](c echo.Context, ids []T, asJSON bool, form idForm) error {
	if !asJSON {
		w := newBodyWriter(c, textPlain)
		for _, id := range ids {
			w.b = append(appendId(w.b, int64(id), form), '\n')
			w.maybeFlush()
		}
		return w.finish()
	}
	w := newBodyWriter(c, appJSON)
	w.b = append(w.b, '[')
	for i, id := range ids {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(appendId(append(w.b, '"'), int64(id), form), '"')
		w.maybeFlush()
	}
	w.b = append(w.b, "]\n"...)
	return w.finish()
}
