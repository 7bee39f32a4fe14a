package restserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/segconfig"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// createPeriodTag creates a period tag in the store cfg names, as
// vesta-segment create-tag --group does.
func createPeriodTag(t testing.TB, cfg config.Config, pt segstore.PeriodTag) {
	t.Helper()
	sc, err := segconfig.Stores(cfg)
	require.NoError(t, err)
	sc.OnDemand = false
	st, err := stores.OpenStore(context.Background(), sc)
	require.NoError(t, err)
	defer st.Close()
	ps, err := segstore.PeriodStoreOf(st)
	require.NoError(t, err)
	require.NoError(t, ps.CreatePeriodTag(context.Background(), pt))
}

func getNumber(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// GET /number/{tag} serves a period tag's numbers as JSON, the text
// formatted and the period and sequence apart; the errors are the
// segment endpoints'.
func TestNumberEndpoint(t *testing.T) {
	cfg := testConfig(t, "--segment-tags", "order")
	createPeriodTag(t, cfg, segstore.PeriodTag{Tag: "ord", Group: segstore.GroupDay, Format: "ORD{yyyyMMdd}{seq:6}", Step: 10})
	_, ts := startServer(t, cfg)
	day := time.Now().UTC().Format("20060102")
	for i := 1; i <= 3; i++ {
		status, body := getNumber(t, ts.URL+"/number/ord")
		require.Equal(t, http.StatusOK, status, string(body))
		var n intf.SegmentNumber
		require.NoError(t, json.Unmarshal(body, &n))
		if n.Period != day { // midnight passed during the test
			day = n.Period
		}
		assert.Equal(t, fmt.Sprintf(`{"number":"ORD%s%06d","period":"%s","seq":%d}`+"\n", day, n.Seq, day, n.Seq), string(body))
	}
	status, body := getNumber(t, ts.URL+"/number/order") // a leaf_alloc tag is no period tag
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, string(body), `"param":"tag"`)
	status, _ = getNumber(t, ts.URL+"/number/a%20b")
	assert.Equal(t, http.StatusBadRequest, status)
}

// A period whose {seq:N} is used up answers 503 with Retry-After until the
// period ends and a body naming the tag, the period and the width; the
// condition is logged once (by the generator), not per call, and no call
// draws from the database.
func TestNumberPeriodExhausted(t *testing.T) {
	var log syncbuf.Buffer
	cfg := testConfigLog(t, &log)
	tiny := segstore.PeriodTag{Tag: "tiny", Group: segstore.GroupYear, Format: "T{yyyy}-{seq:1}", Step: 4}
	createPeriodTag(t, cfg, tiny)
	_, ts := startServer(t, cfg)
	for range 9 {
		status, body := getNumber(t, ts.URL+"/number/tiny")
		require.Equal(t, http.StatusOK, status, string(body))
	}
	for range 50 {
		r := get(t, ts.URL+"/number/tiny")
		require.Equal(t, http.StatusServiceUnavailable, r.status, r.body)
		year := time.Now().UTC().Format("2006")
		var e struct {
			Error      string
			Tag        string
			Period     string
			Width      int
			RetryAfter float64
		}
		require.NoError(t, json.Unmarshal([]byte(r.body), &e), r.body)
		assert.Equal(t, []any{"tiny", year, 1}, []any{e.Tag, e.Period, e.Width}, r.body)
		for _, s := range []string{`"tiny"`, year, "{seq:1}"} {
			assert.Contains(t, e.Error, s)
		}
		secs, err := strconv.Atoi(r.header.Get("Retry-After"))
		require.NoError(t, err, "Retry-After %q", r.header.Get("Retry-After"))
		assert.Equal(t, int(math.Ceil(e.RetryAfter)), secs, "the header is the body's wait in whole seconds")
		assert.Positive(t, secs)
		assert.LessOrEqual(t, secs, 366*24*3600, "until the year ends")
	}
	assert.Equal(t, 1, strings.Count(log.String(), "used up its period's numbers"), log.String())
	assert.NotContains(t, log.String(), "internal error")

	// The period's counter stopped at the ranges drawn before:
	// [1, 5), [5, 9), [9, 13).
	sc, err := segconfig.Stores(cfg)
	require.NoError(t, err)
	sc.OnDemand = false
	st, err := stores.OpenStore(context.Background(), sc)
	require.NoError(t, err)
	defer st.Close()
	ps, err := segstore.PeriodStoreOf(st)
	require.NoError(t, err)
	r, err := ps.AllocPeriod(context.Background(), "tiny", 1)
	require.NoError(t, err)
	assert.Equal(t, int64(13), r.Start)
}
