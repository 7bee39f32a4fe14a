package deploycheck

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/internal/tlstest"
)

const (
	rulesFile     = "prometheus/vesta-alerts.yaml"
	dashboardFile = "grafana/vesta-dashboard.json"
)

// promql parses the expressions of the rules and the dashboard.
var promql = parser.NewParser(parser.Options{})

// selectorNames are the metric names an expression selects.
func selectorNames(t *testing.T, where, expr string) []string {
	t.Helper()
	e, err := promql.ParseExpr(expr)
	require.NoError(t, err, "%s: %s", where, expr)
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			require.NotEmpty(t, vs.Name, "%s: select metrics by name: %s", where, expr)
			names = append(names, vs.Name)
		}
		return nil
	})
	return names
}

// grafanaVars replaces the dashboard's variables by values PromQL parses.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h", "$instance", ".*")

// labelValues is a templating query: label_values(metric, label).
var labelValues = regexp.MustCompile(`^label_values\((\w+),\s*\w+\)$`)

// dashboardExprs are the PromQL expressions of the dashboard: every
// panel's targets (rows' panels too) and the templating queries' metrics.
func dashboardExprs(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var d struct {
		Panels     []dashPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	exprs := map[string]string{}
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				require.NotEmpty(t, tg.Expr, "panel %q target %s has no expr", p.Title, tg.RefID)
				exprs["panel "+p.Title+" "+tg.RefID] = grafanaVars.Replace(tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		m := labelValues.FindStringSubmatch(q["query"].(string))
		require.NotNil(t, m, "variable %s: want label_values(metric, label)", v.Name)
		exprs["variable "+v.Name] = m[1]
	}
	require.Greater(t, len(exprs), 20, "the dashboard's panels were found")
	return exprs
}

type dashPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}

// Every metric the dashboard and the rules name is exported by the real
// servers (REST and RPC, with TLS, an auth file and segment mode on, after
// a few calls): a renamed metric, or a typo, fails here, not in the
// middle of an incident. The door's own metrics (vesta_http_*,
// vesta_rpc_*) need one server; every other name, the core's, both.
func TestEveryMetricNamedExists(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs server-rest and server-rpc")
	}
	t.Parallel()
	sec := secure(t)
	hc := sec.httpClient()

	rest := startServer(t, "github.com/vesta-go/vesta/server-rest",
		map[string]*regexp.Regexp{"listen": regexp.MustCompile(`msg="vesta: listening" server=rest addr=(\S+)`)},
		append(sec.args(), "--listen", "127.0.0.1:0", "--machine", "21", "--data-dir", t.TempDir(), "--segment-tags", "order")...)
	restBase := "https://" + rest.addr["listen"]
	get(t, hc, restBase+"/genid")
	get(t, hc, restBase+"/genid?count=10")
	get(t, hc, restBase+"/segment/order?count=3")
	restNames := metricNames(t, get(t, hc, restBase+"/metrics"))

	rpc := startServer(t, "github.com/vesta-go/vesta/server-rpc",
		map[string]*regexp.Regexp{
			"listen": regexp.MustCompile(`msg="vesta: listening" server=rpc addr=(\S+)`),
			"admin":  regexp.MustCompile(`msg="vesta: admin listening" addr=(\S+)`),
		},
		append(sec.args(), "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--machine", "22",
			"--data-dir", t.TempDir(), "--segment-tags", "order")...)
	c, err := client.New([]string{rpc.addr["listen"]}, client.WithToken(token), client.WithTLS(tlstest.ClientConfig(sec.ca, nil)), client.WithDialTimeout(10*time.Second))
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = c.GenIds(ctx, 10)
	require.NoError(t, err)
	_, err = c.NextIds(ctx, "order", 3)
	require.NoError(t, err)
	_, err = c.NextIds(ctx, "coupon", 1)
	require.Error(t, err, "an error code, so that the errors' series exist")
	rpcNames := metricNames(t, get(t, hc, "https://"+rpc.addr["admin"]+"/metrics"))

	named := map[string][]string{} // metric → where
	for where, expr := range dashboardExprs(t) {
		for _, n := range selectorNames(t, dashboardFile+" "+where, expr) {
			named[n] = append(named[n], dashboardFile+" "+where)
		}
	}
	for _, r := range loadRules(t) {
		for _, n := range selectorNames(t, rulesFile+" "+r.Alert, r.Expr) {
			named[n] = append(named[n], rulesFile+" "+r.Alert)
		}
	}
	require.NotEmpty(t, named)
	names := make([]string, 0, len(named))
	for n := range named {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "vesta_http_"):
			assert.True(t, restNames[n], "%s (in %v) is not in server-rest's /metrics", n, named[n])
		case strings.HasPrefix(n, "vesta_rpc_"):
			assert.True(t, rpcNames[n], "%s (in %v) is not in server-rpc's /metrics", n, named[n])
		default:
			assert.True(t, restNames[n], "%s (in %v) is not in server-rest's /metrics", n, named[n])
			assert.True(t, rpcNames[n], "%s (in %v) is not in server-rpc's /metrics", n, named[n])
		}
	}
	t.Logf("%d metrics named by the dashboard and the rules, all exported", len(names))
}
