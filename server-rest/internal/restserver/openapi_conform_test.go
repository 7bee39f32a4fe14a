package restserver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/server/app"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// spec is docs/openapi.yaml as kin-openapi reads it, loaded once: every
// test of the package that fetches from a server checks the answer
// against it (conform).
var spec struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// openAPISpec loads docs/openapi.yaml and validates it as an OpenAPI 3
// document, its examples, defaults and patterns included.
func openAPISpec() (*openapi3.T, routers.Router, error) {
	spec.once.Do(func() {
		// /ui is HTML, which kin-openapi reads as it reads text/plain: a
		// string (the schema says no more).
		openapi3filter.RegisterBodyDecoder("text/html", func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			b, err := io.ReadAll(body)
			return string(b), err
		})
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromFile(openAPIFile)
		if err != nil {
			spec.err = fmt.Errorf("%s: %w", openAPIFile, err)
			return
		}
		ctx := openapi3.WithValidationOptions(context.Background(),
			openapi3.EnableExamplesValidation(), openapi3.EnableSchemaDefaultsValidation(),
			openapi3.EnableSchemaPatternValidation(), openapi3.EnableSchemaFormatValidation())
		if err := doc.Validate(ctx); err != nil {
			spec.err = fmt.Errorf("%s is no valid OpenAPI 3 document: %w", openAPIFile, err)
			return
		}
		// Route by path alone: the servers entry (localhost:8080) is an
		// example, the tests' servers listen on random ports.
		routed := *doc
		routed.Servers = nil
		router, err := legacy.NewRouter(&routed)
		if err != nil {
			spec.err = fmt.Errorf("%s: routes: %w", openAPIFile, err)
			return
		}
		spec.doc, spec.router = doc, router
	})
	return spec.doc, spec.router, spec.err
}

// exchange is one request and the answer the server gave.
type exchange struct {
	req    *http.Request
	status int
	header http.Header
	body   []byte
}

// conform checks an exchange against docs/openapi.yaml and returns the
// documented answer it is ("GET /genid 200", "404 NotFound"):
//   - a path the document does not list must be the 404 of
//     components/responses/NotFound;
//   - a method other than GET must be the 405 the operation documents;
//   - the status must be one the operation documents, and the headers and
//     body must match its schema for the content type sent;
//   - the document may be looser than the server (some ranges depend on
//     the configuration) but never stricter: a request the server answers
//     with 2xx must be valid by the document, and a request the document
//     refuses must get a 4xx.
func conform(x exchange) (string, error) {
	doc, router, err := openAPISpec()
	if err != nil {
		return "", err
	}
	if err := jsonEndsInNewline(x.header.Get("Content-Type"), x.body); err != nil {
		return "", fmt.Errorf("%s %s: %w", x.req.Method, x.req.URL, err)
	}
	ctx := context.Background()
	// Route as Echo does: on the escaped path (an escaped "/" stays in its
	// segment), with path parameters unescaped once.
	get := x.req.Clone(ctx)
	get.Method = http.MethodGet
	get.URL.Path, get.URL.RawPath = x.req.URL.EscapedPath(), ""
	route, pathParams, err := router.FindRoute(get)
	var re *routers.RouteError
	if err == nil && !matchesTemplate(route.Path, get.URL.Path) {
		err = &routers.RouteError{Reason: routers.ErrPathNotFound.Error()} // the router forgives a trailing "/"
	}
	for name, v := range pathParams {
		if u, uerr := url.PathUnescape(v); uerr == nil {
			pathParams[name] = u
		}
	}
	if errors.As(err, &re) && re.Reason == routers.ErrPathNotFound.Error() {
		if x.status != http.StatusNotFound {
			return "", fmt.Errorf("%s %s is no documented path, yet answered %d", x.req.Method, x.req.URL.Path, x.status)
		}
		return "404 NotFound", conformBody(doc.Components.Responses["NotFound"].Value, x)
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", x.req.Method, x.req.URL, err)
	}
	what := fmt.Sprintf("GET %s %d", route.Path, x.status)
	if x.req.Method != http.MethodGet && x.status != http.StatusMethodNotAllowed {
		return what, fmt.Errorf("%s %s answered %d, want 405: every operation is GET only", x.req.Method, x.req.URL, x.status)
	}
	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
	in := &openapi3filter.RequestValidationInput{Request: get, PathParams: pathParams, Route: route, Options: opts}
	if x.req.Method == http.MethodGet {
		reqErr := openapi3filter.ValidateRequest(ctx, in)
		switch {
		case reqErr != nil && x.status/100 == 2:
			return what, fmt.Errorf("GET %s: the server answered %d, but the document refuses the request: %w", x.req.URL, x.status, reqErr)
		case reqErr != nil && x.status/100 != 4:
			return what, fmt.Errorf("GET %s: the document refuses the request (%v), but the server answered %d", x.req.URL, reqErr, x.status)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: x.status, Header: x.header, Options: opts,
		Body: io.NopCloser(bytes.NewReader(x.body)),
	}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return what, fmt.Errorf("%s %s: the answer %d %q does not match the document: %w", x.req.Method, x.req.URL, x.status, cut(x.body), err)
	}
	return what, nil
}

// jsonEndsInNewline checks the one rule of JSON bodies the document cannot
// state: every JSON body, of every route and status, ends with exactly one
// newline (as Echo's encoder writes it), so that curl's output ends its line
// and a client reading JSON lines reads one per body.
func jsonEndsInNewline(ctype string, body []byte) error {
	if !strings.HasPrefix(ctype, "application/json") {
		return nil
	}
	if !bytes.HasSuffix(body, []byte("}\n")) && !bytes.HasSuffix(body, []byte("]\n")) {
		return fmt.Errorf("the JSON body %q does not end with one newline", cut(body))
	}
	return nil
}

// matchesTemplate tells whether path is the documented path template
// ("/segment/{tag}") with each parameter one non-empty segment.
func matchesTemplate(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i, seg := range ts {
		if strings.HasPrefix(seg, "{") && ps[i] != "" || seg == ps[i] {
			continue
		}
		return false
	}
	return true
}

// conformBody checks an answer against a response documented outside any
// operation (NotFound): its content type and body schema.
func conformBody(resp *openapi3.Response, x exchange) error {
	ctype := x.header.Get("Content-Type")
	mt := resp.Content.Get(ctype)
	if mt == nil {
		return fmt.Errorf("%s %s: %d with content type %q, which the document does not give", x.req.Method, x.req.URL, x.status, ctype)
	}
	var body any
	if err := jsonUnmarshal(string(x.body), &body); err != nil {
		return fmt.Errorf("%s %s: %d body %q: %w", x.req.Method, x.req.URL, x.status, cut(x.body), err)
	}
	if err := mt.Schema.Value.VisitJSON(body, openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("%s %s: %d body %q does not match the document: %w", x.req.Method, x.req.URL, x.status, cut(x.body), err)
	}
	return nil
}

// cut shortens a body for an error message.
func cut(b []byte) string {
	const max = 200
	s := string(b)
	if len(s) > max {
		return s[:max] + "..."
	}
	return strings.TrimSpace(s)
}

// failingService is the real ID service whose ID calls fail with an error
// the server cannot map: a server bug, answered 500.
type failingService struct{ restserver.Service }

var errBug = errors.New("a bug the server does not know")

func (failingService) GenId(context.Context) (intf.Id, error)         { return 0, errBug }
func (failingService) GenIds(context.Context, int) ([]intf.Id, error) { return nil, errBug }
func (failingService) ExpId(context.Context, intf.Id) (intf.IdFields, error) {
	return intf.IdFields{}, errBug
}
func (failingService) MakeId(context.Context, intf.MakeIdRequest) (intf.Id, error) { return 0, errBug }
func (failingService) TransTime(context.Context, int64, intf.IdType) (time.Time, error) {
	return time.Time{}, errBug
}

// failingSegments is real segment mode whose ID calls fail the same way.
type failingSegments struct{ restserver.Segments }

func (failingSegments) NextId(context.Context, string) (int64, error)         { return 0, errBug }
func (failingSegments) NextIds(context.Context, string, int) ([]int64, error) { return nil, errBug }
func (failingSegments) NextRange(context.Context, string, int64) (intf.SegmentRange, error) {
	return intf.SegmentRange{}, errBug
}
func (failingSegments) NextNumber(context.Context, string) (intf.SegmentNumber, error) {
	return intf.SegmentNumber{}, errBug
}

// periodOrder is the period tag the conformance test serves.
var periodOrder = segstore.PeriodTag{Tag: "order", Group: segstore.GroupDay, Format: "ORD{yyyyMMdd}{seq:6}", Step: 10}

// documentedAnswers lists every answer docs/openapi.yaml documents, as
// conform names them.
func documentedAnswers(t *testing.T) []string {
	doc, _, err := openAPISpec()
	require.NoError(t, err)
	answers := []string{"404 NotFound"}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status := range op.Responses.Map() {
				answers = append(answers, method+" "+path+" "+status)
			}
		}
	}
	slices.Sort(answers)
	return answers
}

// TestOpenAPIConformance drives the real server through every state
// (ready, starting, failing, segment mode off) and every documented
// answer of every route, successes and errors, and checks each answer
// against docs/openapi.yaml (conform). Every documented answer must be
// seen: the document lists nothing the server never says.
func TestOpenAPIConformance(t *testing.T) {
	seen := map[string]bool{}
	var token string // the Bearer token the next checks send ("" none)
	check := func(base, method, path, accept, body string) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		what, err := conform(exchange{req: req, status: resp.StatusCode, header: resp.Header, body: b})
		require.NoError(t, err)
		seen[what] = true
	}
	const js = "application/json"
	big := strings.Repeat("x", 4097)
	idPaths := []string{"/genid", "/expid?id=" + workedId, "/transtime?time=1", "/makeid?" + workedQuery, "/segment/order",
		"/segment/order/range?size=10", "/number/order"}

	t.Run("ready", func(t *testing.T) {
		cfg := testConfig(t, "--machine", "78", "--segment-tags", "order")
		createPeriodTag(t, cfg, periodOrder)
		createPeriodTag(t, cfg, segstore.PeriodTag{Tag: "tiny", Group: segstore.GroupYear, Format: "T{yyyy}{seq:1}", Step: 5})
		_, ts := startServer(t, cfg)
		for range 10 { // 9 numbers, then the year's are used up: 503
			check(ts.URL, "GET", "/number/tiny", "", "")
		}
		for _, p := range append(idPaths, "/genid?count=3", "/segment/order?count=3", "/segment/order/range", "/transtime?time=1&type=MIN_GRANULARITY",
			"/makeid?"+workedQuery+"&type=maxpeak&genMethod=2&version=1") {
			check(ts.URL, "GET", p, "", "")
			check(ts.URL, "GET", p, js, "")
			check(ts.URL, "GET", p, "", big) // 413
		}
		for _, p := range []string{"/genid?count=0", "/expid", "/expid?id=x", "/transtime", "/transtime?time=1&type=2",
			"/makeid?time=1", "/makeid?time=1&seq=1048576", "/segment/order?count=0", "/segment/a%20b",
			"/segment/order/range?size=0", "/segment/order/range?size=-1", "/segment/order/range?size=abc",
			"/segment/order/range?size=10000001", "/segment/order/range?size=", "/segment/a%20b/range?size=1", "/number/a%20b"} {
			check(ts.URL, "GET", p, js, "")
		}
		check(ts.URL, "GET", "/segment/coupon", "", "")
		check(ts.URL, "GET", "/segment/coupon/range?size=5", "", "")
		check(ts.URL, "GET", "/number/coupon", "", "")
		for _, p := range []string{"/segment", "/healthz", "/readyz", "/metrics", "/status", "/ui"} {
			check(ts.URL, "GET", p, "", "")
		}
		for _, item := range []string{"/genid", "/expid", "/transtime", "/makeid", "/segment/order", "/segment/order/range", "/segment", "/number/order", "/healthz", "/readyz", "/metrics", "/status", "/ui"} {
			check(ts.URL, "POST", item, "", "")
		}
		check(ts.URL, "GET", "/genId", "", "")
		check(ts.URL, "GET", "/segment/order/", "", "")
	})

	t.Run("auth", func(t *testing.T) {
		clients := []access.Client{
			{Name: "gen", Tokens: [][32]byte{access.HashToken("vesta_gen-token")}, Scopes: []access.Scope{"genid"}},
			{Name: "dec", Tokens: [][32]byte{access.HashToken("vesta_dec-token")}, Scopes: []access.Scope{"decode"}},
			{Name: "slow", Tokens: [][32]byte{access.HashToken("vesta_slow-token")}, Scopes: []access.Scope{"genid", "segment:*"}, Rate: 1, Burst: 1},
		}
		p, err := access.NewPolicy(clients)
		require.NoError(t, err)
		// The quotas' clock moves only when the guard holds a call that
		// came back before its Retry-After: the same answers as on the
		// real clock, without the real seconds of those holds.
		var (
			clockMu sync.Mutex
			now     = time.Now()
		)
		g, err := access.NewGuard(access.Options{Policy: p, Logger: slog.New(slog.DiscardHandler),
			Now: func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now },
			Sleep: func(ctx context.Context, d time.Duration) error {
				clockMu.Lock()
				now = now.Add(d)
				clockMu.Unlock()
				return ctx.Err()
			}})
		require.NoError(t, err)
		cfg := testConfig(t, "--machine", "79", "--segment-tags", "order")
		createPeriodTag(t, cfg, periodOrder)
		_, ts := startServer(t, cfg, restserver.WithGuard(g))
		routes := []string{"/genid", "/expid?id=" + workedId, "/transtime?time=1", "/makeid?" + workedQuery, "/segment", "/segment/order",
			"/segment/order/range?size=5", "/number/order", "/metrics", "/status", "/ui"}
		defer func() { token = "" }()
		for _, tok := range []string{"", "vesta_gen-token", "vesta_dec-token"} { // 401 everywhere; 403 where the client lacks the scope
			token = tok
			for _, r := range routes {
				check(ts.URL, "GET", r, "", "")
			}
		}
		token = "vesta_slow-token" // a burst of 1: the second call is over the quota
		for _, r := range []string{"/genid", "/genid", "/segment/order", "/segment/order", "/segment/order/range", "/segment/order/range", "/number/order", "/number/order"} {
			check(ts.URL, "GET", r, "", "")
		}
	})

	t.Run("starting", func(t *testing.T) {
		release := make(chan struct{})
		block := func(ctx context.Context) error {
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		cfg := testConfig(t, "--segment-tags", "order")
		start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
			if err := block(ctx); err != nil {
				return nil, err
			}
			return restapp.Start(cfg)(ctx)
		}
		open := func(ctx context.Context, cfg config.Config) (restserver.Segments, error) {
			if err := block(ctx); err != nil {
				return nil, err
			}
			return openSegments(ctx, cfg)
		}
		srv := newServer(cfg, start, withSegments(cfg, open))
		ctx, cancel := context.WithCancel(context.Background())
		base, done := serve(t, ctx, srv)
		for _, p := range append(idPaths, "/segment", "/readyz", "/healthz", "/metrics", "/status") {
			check(base, "GET", p, "", "")
		}
		close(release)
		<-srv.Ready()
		cancel()
		require.NoError(t, <-done)
	})

	t.Run("failing", func(t *testing.T) {
		cfg := testConfig(t, "--segment-tags", "order")
		start := func(ctx context.Context, cfg config.Config) (restserver.Service, error) {
			svc, err := restapp.Start(cfg)(ctx)
			return failingService{svc}, err
		}
		open := func(ctx context.Context, cfg config.Config) (restserver.Segments, error) {
			seg, err := openSegments(ctx, cfg)
			return failingSegments{seg}, err
		}
		_, ts := startServerWith(t, cfg, start, withSegments(cfg, open))
		for _, p := range idPaths {
			check(ts.URL, "GET", p, "", "")
		}
	})

	t.Run("segment mode off", func(t *testing.T) {
		_, ts := startServer(t, testConfig(t, "--segment-store", "off"))
		check(ts.URL, "GET", "/segment", "", "")
		check(ts.URL, "GET", "/segment/order", "", "")
		check(ts.URL, "GET", "/segment/order/range?size=5", "", "")
		check(ts.URL, "GET", "/number/order", "", "")
	})

	var missing []string
	for _, a := range documentedAnswers(t) {
		if !seen[a] {
			missing = append(missing, a)
		}
	}
	assert.Empty(t, missing, "documented answers the server never gave")
}

// openSegments opens segment mode as server-rest does.
func openSegments(ctx context.Context, cfg config.Config) (restserver.Segments, error) {
	g, err := app.OpenSegments(ctx, cfg)
	if err != nil || g == nil {
		return nil, err
	}
	return g, nil
}

// TestOpenAPITypeParam checks that the type parameter's pattern is
// exactly what the server accepts: a value the document allows gets 200,
// one it refuses 400.
func TestOpenAPITypeParam(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--segment-store", "off"))
	doc, _, err := openAPISpec()
	require.NoError(t, err)
	schema := doc.Components.Schemas["IdTypeParam"].Value
	for _, v := range []string{
		"0", "1", "+0", "-0", "00", "+1", "001", " 0", "1 ", "-1", "2", "+-0", "0x0", "1.0", "",
		"max-peak", "MAX-PEAK", "Max_Peak", "maxpeak", " max-peak\t", "max--peak", "max peak", "max-peak-",
		"min-granularity", "MIN_GRANULARITY", "mingranularity", "min-gran", "granularity", "peak",
		"\vmax-peak", "\u00a0min-granularity\u3000", "\u2028max-peak\u0085", "\ufeffmax-peak", "\u200bmax-peak", "\v1", "\v+1",
	} {
		r := get(t, ts.URL+"/transtime?time=1&type="+url.QueryEscape(v))
		allowed := schema.VisitJSON(v) == nil
		assert.Equal(t, allowed, r.status == 200, "type %q: document allows it: %v; server answered %d %s", v, allowed, r.status, r.body)
	}
}

// TestOpenAPIIsValid validates docs/openapi.yaml with kin-openapi: an
// OpenAPI 3 document whose examples match their schemas.
func TestOpenAPIIsValid(t *testing.T) {
	_, _, err := openAPISpec()
	require.NoError(t, err)
}
