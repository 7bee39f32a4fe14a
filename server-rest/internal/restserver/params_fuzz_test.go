package restserver_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// fuzzEndpoints are the endpoints that read parameters, with the
// parameters each one knows.
var fuzzEndpoints = []struct {
	path   string
	params []string
}{
	{"/genid", []string{"count"}},
	{"/expid", []string{"id"}},
	{"/transtime", []string{"time", "type"}},
	{"/makeid", []string{"time", "seq", "machine", "genMethod", "type", "version"}},
	{"/segment/", []string{"count", "tag"}}, // + the tag
}

// fuzzTags are the segment tags the fuzzed server has.
var fuzzTags = []string{"order", "fuzz"}

// FuzzRESTParams sends any query string, Accept header and segment tag to
// the real handler of a ready server (real ID service, SQLite segment
// mode) and checks, for /genid, /expid, /transtime, /makeid and
// /segment/{tag}:
//   - the answer conforms to docs/openapi.yaml (conform);
//   - no panic, never a 500, only 200, 400 or 404 (an unknown tag or path);
//   - every error is JSON; a 400 whose query string parses names the
//     parameter to blame ("param", a parameter of the endpoint or of the
//     query), and its message starts "parameter <param>:";
//   - a 200 is well formed and round-trips: /makeid's ID splits (via
//     /expid) into the fields given; /expid's fields make (via /makeid)
//     the same ID, whose signed and unsigned forms are those asked for;
//     /transtime's time is an RFC 3339 instant of the time asked for;
//     /genid and /segment/{tag} give count (default 1) strictly
//     increasing IDs.
//
// The request is read from a raw request line with http.ReadRequest, as
// net/http's server would; what it refuses never reaches the API.
func FuzzRESTParams(f *testing.F) {
	// Seeds: endpoint, query, Accept, tag.
	for _, s := range []struct {
		ep           uint8
		q, accept, t string
	}{
		{0, "", "", ""},
		{0, "count=3", "application/json", ""},
		{0, "count=10000", "", ""},
		{0, "count=10001", "", ""},
		{0, "count=0", "", ""},
		{0, "count=", "", ""},
		{0, "count", "", ""},
		{0, "count=1&count=2", "", ""},
		{0, "count=%zz", "", ""},
		{0, "count=1;foo=2", "", ""},
		{0, "foo=1", "application/json;q=0", ""},
		{0, "count=-1", "*/*", ""},
		{0, "count=9223372036854775808", "", ""},
		{1, "id=2705126582500361294", "", ""},
		{1, "id=-6518245454354414514", "", ""},
		{1, "id=11928498619355137102", "", ""},
		{1, "id=18446744073709551616", "", ""},
		{1, "id=+18446744073709551615", "", ""},
		{1, "id=-9223372036854775809", "", ""},
		{1, "id=12abc", "", ""},
		{1, "id=1&id=2", "", ""},
		{1, "", "", ""},
		{2, "time=371861805", "", ""},
		{2, "time=371861805000&type=min-granularity", "application/json", ""},
		{2, "time=1&type=fast", "", ""},
		{2, "time=1&type=2", "", ""},
		{2, "time=-1", "", ""},
		{2, "time=9223372036854775807&type=1", "application/json", ""},
		{3, "time=371861805&seq=498081&machine=78", "", ""},
		{3, "time=371861805&seq=498081&machine=78&version=1", "application/json", ""},
		{3, "time=371861805&seq=1048576", "", ""},
		{3, "time=371861805", "", ""},
		{3, "time=1099511627775&seq=1023&machine=1023&genMethod=3&type=1&version=1", "", ""},
		{3, "time=1&seq=1&machine=1024", "", ""},
		{3, "time=1&seq=1&genMethod=-1&type=max-peak", "", ""},
		{3, "time=1&seq=1&type=min-granularity&version=2", "", ""},
		{4, "", "", "order"},
		{4, "count=5", "application/json", "fuzz"},
		{4, "count=0", "", "order"},
		{4, "", "", "coupon"},
		{4, "", "", "a%20b"},
		{4, "", "", "a/b"},
		{4, "", "", strings.Repeat("x", 129)},
		{4, "", "", "%"},
	} {
		f.Add(s.ep, s.q, s.accept, s.t)
	}

	cfg := testConfig(f, "--machine", "17", "--segment-tags", strings.Join(fuzzTags, ","))
	srv, _ := startServer(f, cfg)
	h := srv.Handler()

	f.Fuzz(func(t *testing.T, ep uint8, rawQuery, accept, tag string) {
		e := fuzzEndpoints[int(ep)%len(fuzzEndpoints)]
		target := e.path
		if e.path == "/segment/" {
			target += tag
		}
		if rawQuery != "" {
			target += "?" + rawQuery
		}
		r := fuzzServe(h, target, accept)
		if r == nil {
			return // net/http refuses the request itself
		}
		if _, err := conform(exchange{req: r.req, status: r.status, header: r.header, body: []byte(r.body)}); err != nil {
			t.Fatal(err)
		}
		switch r.status {
		case http.StatusOK:
			checkOK(t, h, e.path, r)
		case http.StatusBadRequest, http.StatusNotFound:
			checkError(t, e.path, e.params, r)
		default:
			t.Fatalf("GET %s (Accept %q): status %d, body %s", r.target, accept, r.status, r.body)
		}
	})
}

// fuzzResponse is a response of the handler, with the request it answers.
type fuzzResponse struct {
	target string
	req    *http.Request
	status int
	ctype  string
	header http.Header
	body   string
}

func (r *fuzzResponse) json() bool { return strings.HasPrefix(r.ctype, "application/json") }

// fuzzServe reads "GET target" with an Accept header as net/http's server
// would and serves it with h; nil when net/http refuses the request.
func fuzzServe(h http.Handler, target, accept string) *fuzzResponse {
	raw := "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	if accept != "" {
		raw += "Accept: " + accept + "\r\n"
	}
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw + "\r\n")))
	if err != nil {
		return nil
	}
	// What the server would refuse before a handler sees it: a
	// malformed header value, a target that is not a path.
	for _, v := range req.Header.Values("Accept") {
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			return nil
		}
	}
	if !strings.HasPrefix(req.URL.Path, "/") || req.URL.Host != "" {
		return nil
	}
	req.RemoteAddr = "127.0.0.1:1234"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return &fuzzResponse{target: target, req: req, status: rec.Code, ctype: rec.Header().Get("Content-Type"), header: rec.Header(), body: rec.Body.String()}
}

// checkError checks an error answer: JSON naming the parameter to blame.
func checkError(t *testing.T, path string, known []string, r *fuzzResponse) {
	t.Helper()
	if !r.json() {
		t.Fatalf("GET %s: %d with content type %q, body %q", r.target, r.status, r.ctype, r.body)
	}
	var e struct {
		Error string `json:"error"`
		Param string `json:"param"`
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Error == "" {
		t.Fatalf("GET %s: %d with a malformed error body %q (%v)", r.target, r.status, r.body, err)
	}
	if r.status == http.StatusNotFound {
		// An unknown tag names it; another path is no route at all.
		if e.Param != "" && e.Param != "tag" {
			t.Fatalf("GET %s: 404 blames %q: %s", r.target, e.Param, e.Error)
		}
		if path != "/segment/" {
			t.Fatalf("GET %s: 404 on an endpoint that exists: %s", r.target, e.Error)
		}
		return
	}
	q, qerr := url.ParseQuery(r.req.URL.RawQuery)
	if qerr != nil {
		if e.Param == "" && !strings.Contains(e.Error, "malformed query string") {
			t.Fatalf("GET %s: a malformed query string (%v) answered %q", r.target, qerr, e.Error)
		}
		return
	}
	if e.Param == "" {
		t.Fatalf("GET %s: 400 names no parameter: %s", r.target, e.Error)
	}
	if _, inQuery := q[e.Param]; !inQuery && !slices.Contains(known, e.Param) {
		t.Fatalf("GET %s: 400 blames %q, which is neither a parameter of %s nor in the query: %s", r.target, e.Param, path, e.Error)
	}
	if !strings.HasPrefix(e.Error, "parameter "+e.Param+":") {
		t.Fatalf("GET %s: the message does not start with the parameter %q: %s", r.target, e.Param, e.Error)
	}
}

// checkOK checks a 200 and round-trips it through the other endpoints.
func checkOK(t *testing.T, h http.Handler, path string, r *fuzzResponse) {
	t.Helper()
	q, err := url.ParseQuery(r.req.URL.RawQuery)
	if err != nil {
		t.Fatalf("GET %s: 200 for a malformed query string (%v): %s", r.target, err, r.body)
	}
	one := func(name string) (string, bool) {
		vs, ok := q[name]
		if ok && len(vs) != 1 {
			t.Fatalf("GET %s: 200 although %s is given %d times", r.target, name, len(vs))
		}
		if ok {
			return vs[0], true
		}
		return "", false
	}
	switch path {
	case "/genid", "/segment/":
		want, batch := 1, false
		if s, ok := one("count"); ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 10_000 {
				t.Fatalf("GET %s: 200 for count %q", r.target, s)
			}
			want, batch = n, true
		}
		ids := parseIds(t, r, batch)
		if len(ids) != want {
			t.Fatalf("GET %s: %d IDs, want %d", r.target, len(ids), want)
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("GET %s: IDs not increasing at %d: %d after %d", r.target, i, ids[i], ids[i-1])
			}
		}
		if path == "/segment/" {
			tag := strings.TrimPrefix(r.req.URL.Path, "/segment/")
			if !slices.Contains(fuzzTags, tag) {
				t.Fatalf("GET %s: 200 for tag %q, which does not exist", r.target, tag)
			}
			if ids[0] < 1 {
				t.Fatalf("GET %s: segment ID %d < 1", r.target, ids[0])
			}
			return
		}
		for _, id := range ids {
			if m := intf.Id(id).Fields().Machine; m != 17 {
				t.Fatalf("GET %s: ID %d has machine %d, want 17", r.target, id, m)
			}
		}
	case "/makeid":
		id := parseIds(t, r, false)[0]
		x := expId(t, h, strconv.FormatInt(id, 10))
		got := map[string]int64{"time": x.Time, "seq": x.Seq, "machine": x.Machine, "genMethod": x.GenMethod, "type": x.Type, "version": x.Version}
		for name, v := range got {
			s, given := one(name)
			if !given {
				continue
			}
			var want int64
			if name == "type" {
				tt, err := parseType(s)
				if err != nil {
					t.Fatalf("GET %s: 200 for type %q", r.target, s)
				}
				want = int64(tt)
			} else if want, err = strconv.ParseInt(s, 10, 64); err != nil {
				t.Fatalf("GET %s: 200 for %s %q", r.target, name, s)
			}
			if v != want {
				t.Fatalf("GET %s = %d: /expid gives %s %d, want %d", r.target, id, name, v, want)
			}
		}
		if _, given := one("machine"); !given && x.Machine != 17 {
			t.Fatalf("GET %s = %d: machine %d, want the server's 17", r.target, id, x.Machine)
		}
	case "/expid":
		s, _ := one("id")
		want, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(strings.TrimPrefix(s, "+"), 10, 64)
			if uerr != nil || strings.HasPrefix(s, "-") {
				t.Fatalf("GET %s: 200 for id %q", r.target, s)
			}
			want = int64(u)
		}
		x := decodeExp(t, r)
		if x.Id != strconv.FormatInt(want, 10) || x.IdUnsigned != strconv.FormatUint(uint64(want), 10) {
			t.Fatalf("GET %s: id %s / %s, want %d", r.target, x.Id, x.IdUnsigned, want)
		}
		back := fuzzServe(h, "/makeid?"+url.Values{
			"time": {fmtInt(x.Time)}, "seq": {fmtInt(x.Seq)}, "machine": {fmtInt(x.Machine)},
			"genMethod": {fmtInt(x.GenMethod)}, "type": {fmtInt(x.Type)}, "version": {fmtInt(x.Version)},
		}.Encode(), "")
		if back.status != http.StatusOK || back.body != x.Id {
			t.Fatalf("GET %s: /makeid of its fields gives %d %s, want %s", r.target, back.status, back.body, x.Id)
		}
	case "/transtime":
		s, _ := one("time")
		tm, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("GET %s: 200 for time %q", r.target, s)
		}
		ts := r.body
		if r.json() {
			var j struct {
				Time      int64  `json:"time"`
				Timestamp string `json:"timestamp"`
			}
			if err := json.Unmarshal([]byte(r.body), &j); err != nil {
				t.Fatalf("GET %s: %v: %s", r.target, err, r.body)
			}
			if j.Time != tm {
				t.Fatalf("GET %s: time %d, want %d", r.target, j.Time, tm)
			}
			ts = j.Timestamp
		}
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Fatalf("GET %s: %q is not RFC 3339: %v", r.target, ts, err)
		}
	}
}

func fmtInt(v int64) string { return strconv.FormatInt(v, 10) }

func parseType(s string) (intf.IdType, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n != 0 && n != 1 {
			return 0, errors.New("out of range")
		}
		return intf.IdType(n), nil
	}
	return intf.ParseIdType(s)
}

// parseIds reads the IDs of a 200: text or JSON, one or a batch.
func parseIds(t *testing.T, r *fuzzResponse, batch bool) []int64 {
	t.Helper()
	var strs []string
	switch {
	case r.json() && batch:
		if err := json.Unmarshal([]byte(r.body), &strs); err != nil {
			t.Fatalf("GET %s: %v: %s", r.target, err, r.body)
		}
	case r.json():
		var j struct {
			Id string `json:"id"`
		}
		if err := json.Unmarshal([]byte(r.body), &j); err != nil {
			t.Fatalf("GET %s: %v: %s", r.target, err, r.body)
		}
		strs = []string{j.Id}
	case batch:
		if !strings.HasSuffix(r.body, "\n") {
			t.Fatalf("GET %s: a text batch without its last newline: %q", r.target, r.body)
		}
		strs = strings.Split(strings.TrimSuffix(r.body, "\n"), "\n")
	default:
		strs = []string{r.body}
	}
	ids := make([]int64, len(strs))
	for i, s := range strs {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("GET %s: %q is not an ID: %v", r.target, s, err)
		}
		ids[i] = id
	}
	return ids
}

// expFields is /expid's JSON.
type expFields struct {
	Machine, Seq, Time, GenMethod, Type, Version int64
	Id                                           string `json:"id"`
	IdUnsigned                                   string `json:"idUnsigned"`
}

func decodeExp(t *testing.T, r *fuzzResponse) expFields {
	t.Helper()
	var x expFields
	if err := json.Unmarshal([]byte(r.body), &x); err != nil {
		t.Fatalf("GET %s: %v: %s", r.target, err, r.body)
	}
	return x
}

func expId(t *testing.T, h http.Handler, id string) expFields {
	t.Helper()
	r := fuzzServe(h, "/expid?id="+id, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", r.target, r.status, r.body)
	}
	return decodeExp(t, r)
}
