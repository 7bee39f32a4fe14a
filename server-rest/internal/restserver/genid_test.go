package restserver_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rest/internal/restapp"
	"github.com/vesta-go/vesta/server-rest/internal/restserver"
)

// checkIds asserts that ids are strictly increasing (hence unique) and
// carry machine 78 and genMethod 2 (REST).
func checkIds(t *testing.T, ids []int64) {
	t.Helper()
	for i, id := range ids {
		_, l := intf.Decode(intf.Id(id))
		require.EqualValues(t, 78, l.Machine.Get(uint64(id)), "machine of %d", id)
		require.EqualValues(t, intf.GenMethodREST, l.GenMethod.Get(uint64(id)), "genMethod of %d", id)
		if i > 0 {
			require.Greater(t, id, ids[i-1])
		}
	}
}

func parseLines(t *testing.T, body string) []int64 {
	t.Helper()
	require.True(t, strings.HasSuffix(body, "\n"), "every line ends with a newline")
	var ids []int64
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		id, err := strconv.ParseInt(line, 10, 64)
		require.NoError(t, err, line)
		ids = append(ids, id)
	}
	return ids
}

func parseJSONStrings(t *testing.T, body string) []int64 {
	t.Helper()
	var strs []string
	require.NoError(t, json.Unmarshal([]byte(body), &strs), body)
	ids := make([]int64, len(strs))
	for i, s := range strs {
		var err error
		ids[i], err = strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, s)
	}
	return ids
}

func TestGenIdSingle(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--machine", "78"))

	r := get(t, ts.URL+"/genid")
	require.Equal(t, 200, r.status)
	assert.True(t, strings.HasPrefix(r.ctype, "text/plain"), r.ctype)
	first, err := strconv.ParseInt(r.body, 10, 64) // no trailing newline, as Vesta
	require.NoError(t, err, r.body)

	r = getJSON(t, ts.URL+"/genid")
	require.Equal(t, 200, r.status)
	assert.True(t, strings.HasPrefix(r.ctype, "application/json"), r.ctype)
	var body struct{ Id string }
	require.NoError(t, json.Unmarshal([]byte(r.body), &body))
	second, err := strconv.ParseInt(body.Id, 10, 64)
	require.NoError(t, err)

	r = get(t, ts.URL+"/genid?unknown=ignored")
	require.Equal(t, 200, r.status, "unknown parameters are ignored")
	third, err := strconv.ParseInt(r.body, 10, 64)
	require.NoError(t, err)

	checkIds(t, []int64{first, second, third})
}

func TestGenIdBatch(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--machine", "78"))
	var all []int64
	for _, n := range []int{1, 7, 1000, 10000} { // 10000 (maxBatch) is streamed in pieces
		r := get(t, ts.URL+"/genid?count="+strconv.Itoa(n))
		require.Equal(t, 200, r.status, r.body)
		assert.True(t, strings.HasPrefix(r.ctype, "text/plain"), r.ctype)
		ids := parseLines(t, r.body)
		require.Len(t, ids, n)
		all = append(all, ids...)

		r = getJSON(t, ts.URL+"/genid?count="+strconv.Itoa(n))
		require.Equal(t, 200, r.status, r.body)
		assert.True(t, strings.HasPrefix(r.ctype, "application/json"), r.ctype)
		ids = parseJSONStrings(t, r.body)
		require.Len(t, ids, n)
		all = append(all, ids...)
	}
	checkIds(t, all) // also increasing across requests
}

func TestMaxBatchIsConfigurable(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--machine", "78", "--max-batch", "50"))
	require.Len(t, parseLines(t, get(t, ts.URL+"/genid?count=50").body), 50)
	r := get(t, ts.URL+"/genid?count=51")
	require.Equal(t, 400, r.status)
	msg, param := jsonError(t, r)
	assert.Equal(t, "count", param)
	assert.Contains(t, msg, "1..50")
}

// A library user of New gets the batch cap server-rest runs with
// (maxBatch's default), not intf.MaxBatch; WithMaxBatch below 1 means that
// default, above intf.MaxBatch intf.MaxBatch.
func TestLibraryMaxBatchIsTheServers(t *testing.T) {
	require.Equal(t, config.DefaultMaxBatch, restserver.DefaultMaxBatch)
	cfg := testConfig(t, "--machine", "79")
	for name, opts := range map[string][]restserver.Option{
		"no option":      nil,
		"WithMaxBatch 0": {restserver.WithMaxBatch(0)},
	} {
		srv := restserver.New(restapp.Start(cfg), append(opts, restserver.WithLogger(cfg.Service.Logger))...)
		require.NoError(t, srv.Start(context.Background()), name)
		ts := httptest.NewServer(srv.Handler())
		require.Len(t, parseLines(t, get(t, ts.URL+"/genid?count=10000").body), restserver.DefaultMaxBatch, name)
		r := get(t, ts.URL+"/genid?count=10001")
		assert.Equal(t, 400, r.status, name)
		msg, _ := jsonError(t, r)
		assert.Contains(t, msg, "1..10000", name)
		ts.Close()
		require.NoError(t, srv.Close())
	}
}

// ?format= writes every ID of /genid in the form named, single and batch,
// text and JSON (the batch of 10000 streamed in pieces): each reads back
// with intf.ParseIdAs to an ID of this server, increasing across the
// requests; sortable strings sort as the IDs do.
func TestGenIdFormats(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--machine", "78"))
	var all []int64
	var sortable []string
	for _, f := range intf.Forms {
		for _, n := range []int{0, 3, 10000} {
			q := "/genid?format=" + string(f)
			if n > 0 {
				q += "&count=" + strconv.Itoa(n)
			}
			var strs []string
			r := get(t, ts.URL+q)
			require.Equal(t, 200, r.status, r.body)
			strs = strings.Fields(r.body)
			rj := getJSON(t, ts.URL+q)
			require.Equal(t, 200, rj.status, rj.body)
			if n == 0 {
				var body struct{ Id string }
				require.NoError(t, json.Unmarshal([]byte(rj.body), &body))
				strs = append(strs, body.Id)
			} else {
				var list []string
				require.NoError(t, json.Unmarshal([]byte(rj.body), &list))
				strs = append(strs, list[:n/2]...) // the text batch's, then half the JSON one's
				require.Len(t, list, n)
			}
			for _, s := range strs {
				id, err := intf.ParseIdAs(s, f)
				require.NoError(t, err, "%s %q", f, s)
				all = append(all, int64(id))
				if f == intf.FormSortable {
					sortable = append(sortable, s)
				}
			}
		}
	}
	checkIds(t, all)
	assert.True(t, slices.IsSorted(sortable), "sortable strings sort as their IDs")
}
