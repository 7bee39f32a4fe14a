package restserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The worked example of docs/REFERENCE: max-peak, version 0, genMethod 2,
// time 371861805, seq 498081, machine 78. Setting bit 63 gives its version
// 1 twin, negative as int64 and 2^63 larger written unsigned.
const (
	workedId     = "2705126582500361294"
	workedV1     = "-6518245454354414514"
	workedV1Uint = "11928498619355137102"
	workedTime   = "2026-10-13T14:56:45.000Z"
	workedQuery  = "time=371861805&seq=498081&machine=78"
)

type endpointCase struct {
	name     string
	method   string // GET when empty
	path     string
	accept   string
	body     string
	status   int
	ctype    string   // expected Content-Type prefix; JSON for errors
	want     string   // exact body
	wantJSON string   // body, compared as JSON
	contains []string // substrings of the body (or of the error message)
	param    string   // the parameter a 400 names
}

func TestEndpoints(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--machine", "78"))
	const text, js = "text/plain", "application/json"
	cases := []endpointCase{
		// /makeid
		{name: "makeid worked example", path: "/makeid?" + workedQuery, status: 200, ctype: text, want: workedId},
		{name: "makeid all six fields", path: "/makeid?" + workedQuery + "&genMethod=2&type=max-peak&version=0", status: 200, ctype: text, want: workedId},
		{name: "makeid numeric type", path: "/makeid?" + workedQuery + "&type=0", status: 200, ctype: text, want: workedId},
		{name: "makeid JSON", path: "/makeid?" + workedQuery, accept: js, status: 200, ctype: js, wantJSON: `{"id":"` + workedId + `"}`},
		{name: "makeid version 1 is negative", path: "/makeid?" + workedQuery + "&version=1", status: 200, ctype: text, want: workedV1},
		{name: "makeid machine from config", path: "/makeid?time=371861805&seq=498081", status: 200, ctype: text, want: workedId},
		{name: "makeid missing time", path: "/makeid?seq=1", status: 400, param: "time", contains: []string{"missing", "0..1073741823"}},
		{name: "makeid missing seq", path: "/makeid?time=1", status: 400, param: "seq", contains: []string{"missing", "0..1048575"}},
		{name: "makeid seq out of range", path: "/makeid?time=1&seq=1048576", status: 400, param: "seq", contains: []string{"1048576", "0..1048575"}},
		{name: "makeid seq range follows type", path: "/makeid?time=1&seq=1024&type=min-granularity", status: 400, param: "seq", contains: []string{"0..1023"}},
		{name: "makeid time out of range", path: "/makeid?time=1073741824&seq=0", status: 400, param: "time", contains: []string{"0..1073741823"}},
		{name: "makeid negative time", path: "/makeid?time=-1&seq=0", status: 400, param: "time", contains: []string{"-1", "0..1073741823"}},
		{name: "makeid machine 1024", path: "/makeid?time=1&seq=0&machine=1024", status: 400, param: "machine", contains: []string{"0..1023"}},
		{name: "makeid genMethod 4", path: "/makeid?time=1&seq=0&genMethod=4", status: 400, param: "genMethod", contains: []string{"0..3"}},
		{name: "makeid version 2", path: "/makeid?time=1&seq=0&version=2", status: 400, param: "version", contains: []string{"0..1"}},
		{name: "makeid type 2", path: "/makeid?time=1&seq=0&type=2", status: 400, param: "type", contains: []string{"0..1"}},
		{name: "transtime type 9 before a missing time", path: "/transtime?type=9", status: 400, param: "type", contains: []string{"9", "0..1"}},
		{name: "makeid type name unknown", path: "/makeid?time=1&seq=0&type=fast", status: 400, param: "type", contains: []string{"max-peak", "min-granularity"}},
		{name: "makeid time overflows int64", path: "/makeid?time=99999999999999999999&seq=0", status: 400, param: "time", contains: []string{"overflows"}},
		{name: "makeid seq not a number", path: "/makeid?time=1&seq=12a", status: 400, param: "seq", contains: []string{"not a decimal integer"}},
		{name: "makeid empty seq", path: "/makeid?time=1&seq=", status: 400, param: "seq", contains: []string{"empty"}},
		{name: "makeid machine with spaces", path: "/makeid?time=1&seq=0&machine=%207", status: 400, param: "machine"},

		// /expid
		{name: "expid worked example", path: "/expid?id=" + workedId, status: 200, ctype: js, wantJSON: `{"machine":78,"seq":498081,"time":371861805,"genMethod":2,"type":0,"version":0,
			"id":"` + workedId + `","idUnsigned":"` + workedId + `","typeName":"max-peak","timestamp":"` + workedTime + `"}`},
		{name: "expid version 1 signed", path: "/expid?id=" + workedV1, status: 200, ctype: js, wantJSON: `{"machine":78,"seq":498081,"time":371861805,"genMethod":2,"type":0,"version":1,
			"id":"` + workedV1 + `","idUnsigned":"` + workedV1Uint + `","typeName":"max-peak","timestamp":"` + workedTime + `"}`},
		{name: "expid version 1 unsigned", path: "/expid?id=" + workedV1Uint, status: 200, ctype: js, wantJSON: `{"machine":78,"seq":498081,"time":371861805,"genMethod":2,"type":0,"version":1,
			"id":"` + workedV1 + `","idUnsigned":"` + workedV1Uint + `","typeName":"max-peak","timestamp":"` + workedTime + `"}`},
		{name: "expid min-granularity all ones", path: "/expid?id=18446744073709551615", status: 200, ctype: js, wantJSON: `{"machine":1023,"seq":1023,"time":1099511627775,"genMethod":3,"type":1,"version":1,
			"id":"-1","idUnsigned":"18446744073709551615","typeName":"min-granularity","timestamp":"2049-11-03T11:53:47.775Z"}`},
		{name: "expid missing id", path: "/expid", status: 400, param: "id", contains: []string{"missing"}},
		{name: "expid above 2^64-1", path: "/expid?id=18446744073709551616", status: 400, param: "id", contains: []string{"overflows", "18446744073709551615"}},
		{name: "expid below -2^63", path: "/expid?id=-9223372036854775809", status: 400, param: "id", contains: []string{"overflows"}},
		{name: "expid 21 characters", path: "/expid?id=000000000000000000001", status: 400, param: "id", contains: []string{"21 characters", "20"}},
		{name: "expid 20 characters with the sign", path: "/expid?id=-0000000000000000001", status: 200, ctype: js, wantJSON: `{"machine":1023,"seq":1023,"time":1099511627775,"genMethod":3,"type":1,"version":1,
			"id":"-1","idUnsigned":"18446744073709551615","typeName":"min-granularity","timestamp":"2049-11-03T11:53:47.775Z"}`},
		{name: "expid not a number", path: "/expid?id=0x10", status: 400, param: "id", contains: []string{"not a decimal integer"}},
		{name: "expid duplicate id", path: "/expid?id=1&id=2", status: 400, param: "id", contains: []string{"given 2 times"}},
		{name: "makeid unknown parameter repeated is ignored", path: "/makeid?" + workedQuery + "&a=1&a=1", status: 200, ctype: text, want: workedId},

		// /transtime
		{name: "transtime server type", path: "/transtime?time=371861805", status: 200, ctype: text, want: workedTime},
		{name: "transtime min-granularity epoch", path: "/transtime?time=0&type=min-granularity", status: 200, ctype: text, want: "2014-12-31T16:00:00.000Z"},
		{name: "transtime numeric type", path: "/transtime?time=1500&type=1", status: 200, ctype: text, want: "2014-12-31T16:00:01.500Z"},
		{name: "transtime JSON", path: "/transtime?time=371861805", accept: "text/html, application/json;q=0.9", status: 200, ctype: js,
			wantJSON: `{"time":371861805,"type":0,"typeName":"max-peak","timestamp":"` + workedTime + `","unixMillis":1791903405000}`},
		{name: "transtime JSON refused by q=0", path: "/transtime?time=371861805", accept: "application/json;q=0", status: 200, ctype: text, want: workedTime},
		{name: "transtime missing time", path: "/transtime", status: 400, param: "time", contains: []string{"missing"}},
		{name: "transtime time beyond 30 bits", path: "/transtime?time=1073741824", status: 400, param: "time", contains: []string{"0..1073741823"}},
		{name: "transtime bad type", path: "/transtime?time=1&type=3", status: 400, param: "type", contains: []string{"0..1"}},

		// ?format= (forms of the worked example computed apart, in intf's tests)
		{name: "makeid base62", path: "/makeid?" + workedQuery + "&genMethod=2&format=base62", status: 200, ctype: text, want: "3DpVWTCF2ju"},
		{name: "makeid base58 JSON", path: "/makeid?" + workedQuery + "&genMethod=2&format=base58", accept: js, status: 200, ctype: js, wantJSON: `{"id":"7HCPhEfmNJZ"}`},
		{name: "makeid friendly", path: "/makeid?" + workedQuery + "&genMethod=2&format=friendly", status: 200, ctype: text, want: "2026-10-13T14:56:45Z_m78_s498081_g2"},
		{name: "makeid dec", path: "/makeid?" + workedQuery + "&genMethod=2&format=dec", status: 200, ctype: text, want: workedId},
		{name: "expid base62", path: "/expid?format=base62&id=3DpVWTCF2ju", status: 200, ctype: js, wantJSON: `{"machine":78,"seq":498081,"time":371861805,"genMethod":2,"type":0,"version":0,
			"id":"` + workedId + `","idUnsigned":"` + workedId + `","typeName":"max-peak","timestamp":"` + workedTime + `"}`},
		{name: "expid base36 upper case", path: "/expid?format=base36&id=KJVRCC2Y4CWE", status: 200, ctype: js, wantJSON: `{"machine":78,"seq":498081,"time":371861805,"genMethod":2,"type":0,"version":0,
			"id":"` + workedId + `","idUnsigned":"` + workedId + `","typeName":"max-peak","timestamp":"` + workedTime + `"}`},
		{name: "expid sortable", path: "/expid?format=sortable&id=3DpVWTCF2ju", status: 200, ctype: js, wantJSON: `{"machine":78,"seq":498081,"time":371861805,"genMethod":2,"type":0,"version":0,
			"id":"` + workedId + `","idUnsigned":"` + workedId + `","typeName":"max-peak","timestamp":"` + workedTime + `"}`},
		{name: "expid friendly", path: "/expid?format=friendly&id=2026-10-13T14:56:45Z_m78_s498081_g2", status: 200, ctype: js, wantJSON: `{"machine":78,"seq":498081,"time":371861805,"genMethod":2,"type":0,"version":0,
			"id":"` + workedId + `","idUnsigned":"` + workedId + `","typeName":"max-peak","timestamp":"` + workedTime + `"}`},
		{name: "expid base58 with a 0", path: "/expid?format=base58&id=7HCPhEfmNJ0", status: 400, param: "id", contains: []string{"not base58", "format=base58"}},
		{name: "expid base58 of 15,000 characters", path: "/expid?format=base58&id=" + strings.Repeat("1", 15_000), status: 400, param: "id",
			contains: []string{"too long", "15000 characters", "longest base58 ID has 11"}},
		{name: "expid base62 past 11 characters", path: "/expid?format=base62&id=000000000001", status: 400, param: "id", contains: []string{"too long", "11"}},
		{name: "expid base36 past 13 characters", path: "/expid?format=base36&id=00000000000001", status: 400, param: "id", contains: []string{"too long", "13"}},
		{name: "expid base62 padded to 11", path: "/expid?format=base62&id=00000000000", status: 200, ctype: js, wantJSON: `{"machine":0,"seq":0,"time":0,"genMethod":0,"type":0,"version":0,
			"id":"0","idUnsigned":"0","typeName":"max-peak","timestamp":"2014-12-31T16:00:00.000Z"}`},
		{name: "expid sortable too short", path: "/expid?format=sortable&id=3DpVWTCF2j", status: 400, param: "id", contains: []string{"11 characters"}},
		{name: "expid base62 past 64 bits", path: "/expid?format=base62&id=LygHa16AHYH", status: 400, param: "id", contains: []string{"out of range"}},
		{name: "expid friendly not canonical", path: "/expid?format=friendly&id=2026-10-13T14:56:45Z_s498081_m78_g2", status: 400, param: "id", contains: []string{"not in the form"}},
		{name: "expid unknown format", path: "/expid?format=hex&id=1", status: 400, param: "format", contains: []string{"hex", "base62", "friendly"}},
		{name: "genid unknown format", path: "/genid?format=base64", status: 400, param: "format", contains: []string{"base64", "sortable"}},
		{name: "genid empty format", path: "/genid?format=", status: 400, param: "format"},

		// /genid
		{name: "genid count 0", path: "/genid?count=0", status: 400, param: "count", contains: []string{"1..10000"}},
		{name: "genid count above maxBatch", path: "/genid?count=10001", status: 400, param: "count", contains: []string{"10001", "1..10000"}},
		{name: "genid count negative", path: "/genid?count=-5", status: 400, param: "count", contains: []string{"1..10000"}},
		{name: "genid count not a number", path: "/genid?count=ten", status: 400, param: "count", contains: []string{"1..10000"}},
		{name: "genid count overflows", path: "/genid?count=18446744073709551616", status: 400, param: "count", contains: []string{"overflows"}},
		{name: "genid empty count", path: "/genid?count=", status: 400, param: "count", contains: []string{"empty"}},
		{name: "genid duplicate count", path: "/genid?count=1&count=2", status: 400, param: "count", contains: []string{"given 2 times"}},
		{name: "genid malformed escape", path: "/genid?count=%zz", status: 400, contains: []string{"malformed query"}},
		{name: "genid semicolon separator", path: "/genid?count=1;count=2", status: 400, contains: []string{"malformed query"}},

		// health, routing, limits
		{name: "healthz", path: "/healthz", status: 200, ctype: js, wantJSON: `{"status":"ok"}`},
		{name: "readyz", path: "/readyz", status: 200, ctype: js, wantJSON: `{"status":"ready"}`},
		{name: "unknown path", path: "/genId", status: 404, contains: []string{"/genid", "/expid"}},
		{name: "trailing slash", path: "/genid/", status: 404},
		{name: "escaped path", path: "/gen%69d", status: 404}, // Echo routes the raw path
		{name: "POST not allowed", method: http.MethodPost, path: "/genid", status: 405, contains: []string{"GET"}},
		{name: "DELETE not allowed", method: http.MethodDelete, path: "/makeid?" + workedQuery, status: 405},
		{name: "body at the limit", path: "/genid", body: strings.Repeat("x", 4096), status: 200, ctype: text},
		{name: "body too large", path: "/genid", body: strings.Repeat("x", 4097), status: 413, contains: []string{"4096 bytes"}},
	}
	for _, tc := range cases {
		runEndpointCase(t, ts.URL, tc)
	}
}

func TestChunkedBodyRefused(t *testing.T) {
	_, ts := startServer(t, testConfig(t))
	// A reader of unknown length: the client sends it chunked, as an
	// endless stream could be; the server must not wait for its end.
	body := io.MultiReader(strings.NewReader("x"))
	r := do(t, http.MethodGet, ts.URL+"/genid", nil, body)
	require.Equal(t, 413, r.status, r.body)
	msg, _ := jsonError(t, r)
	assert.Contains(t, msg, "chunked")
}

// runEndpointCase runs tc against the server at base as a subtest.
func runEndpointCase(t *testing.T, base string, tc endpointCase) {
	t.Run(tc.name, func(t *testing.T) {
		method := tc.method
		if method == "" {
			method = http.MethodGet
		}
		header := http.Header{}
		if tc.accept != "" {
			header.Set("Accept", tc.accept)
		}
		var body io.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		r := do(t, method, base+tc.path, header, body)
		require.Equal(t, tc.status, r.status, "body: %s", r.body)
		if tc.status >= 400 {
			msg, param := jsonError(t, r)
			assert.Equal(t, tc.param, param, msg)
			for _, s := range tc.contains {
				assert.Contains(t, msg, s)
			}
			return
		}
		assert.True(t, strings.HasPrefix(r.ctype, tc.ctype), "content type %q, want %q", r.ctype, tc.ctype)
		if tc.want != "" {
			assert.Equal(t, tc.want, r.body)
		}
		if tc.wantJSON != "" {
			assert.JSONEq(t, tc.wantJSON, r.body)
		}
		for _, s := range tc.contains {
			assert.Contains(t, r.body, s)
		}
	})
}
