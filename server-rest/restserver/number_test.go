package restserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/segconfig"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/stores"
)

// createPeriodTag creates a period tag in the store cfg names, as
// vesta-segment create-tag --group does.
func createPeriodTag(t testing.TB, cfg config.Config, pt segment.PeriodTag) {
	t.Helper()
	sc, err := segconfig.Stores(cfg)
	require.NoError(t, err)
	sc.OnDemand = false
	st, err := stores.OpenStore(context.Background(), sc)
	require.NoError(t, err)
	defer st.Close()
	ps, err := segment.PeriodStoreOf(st)
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
	createPeriodTag(t, cfg, segment.PeriodTag{Tag: "ord", Group: segment.GroupDay, Format: "ORD{yyyyMMdd}{seq:6}", Step: 10})
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
