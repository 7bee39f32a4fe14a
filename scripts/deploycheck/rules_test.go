package deploycheck

import (
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadRules parses the rule file as Prometheus does (rulefmt: unknown
// fields refused, every expression and template checked) and returns its
// rules.
func loadRules(t *testing.T) []rulefmt.Rule {
	t.Helper()
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation, promql, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.Empty(t, errs, "%s does not parse", rulesFile)
	var rules []rulefmt.Rule
	for _, g := range groups.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

// The rules parse, and the alerts are all there, each with a
// severity and a runbook section that exists.
func TestRules(t *testing.T) {
	rules := loadRules(t)
	runbook, err := os.ReadFile("../docs/runbook.md")
	require.NoError(t, err)
	headings := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^### (\w+)$`).FindAllStringSubmatch(string(runbook), -1) {
		headings[m[1]] = true
	}
	alerts := map[string]bool{}
	for _, r := range rules {
		require.NotEmpty(t, r.Alert, "only alerting rules: %s", r.Expr)
		assert.False(t, alerts[r.Alert], "%s: one rule per alert", r.Alert)
		alerts[r.Alert] = true
		assert.Contains(t, []string{"critical", "warning"}, r.Labels["severity"], r.Alert)
		assert.NotEmpty(t, r.Annotations["summary"], r.Alert)
		assert.Equal(t, "https://github.com/vesta-go/vesta/blob/main/docs/runbook.md#"+strings.ToLower(r.Alert),
			r.Annotations["runbook_url"], r.Alert)
		assert.True(t, headings[r.Alert], "%s has no section ### %s in docs/runbook.md", r.Alert, r.Alert)
	}
	for _, want := range []string{
		"VestaMachineLeaseNotHeld", "VestaMachineLeaseLost", // fenced or lease lost
		"VestaBitBudgetHigh",             // budget above 80% for 5 min
		"VestaClockBack",                 // clock-back events
		"VestaHighWaterMarkNotPersisted", // mark not persisted
		"VestaSegmentDatabaseUnreachable",
		"VestaSegmentBufferRunningDry",
	} {
		assert.True(t, alerts[want], "alert %s", want)
	}
	for h := range headings {
		if strings.HasPrefix(h, "Vesta") {
			assert.True(t, alerts[h], "docs/runbook.md has a section for %s, which is no alert", h)
		}
	}
}

// A rule that does not parse is refused: the check above can fail.
func TestRulesParserRefusesTypos(t *testing.T) {
	_, errs := rulefmt.Parse([]byte("groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: rate(x[5m]\n"),
		false, model.UTF8Validation, promql, slog.New(slog.NewTextHandler(io.Discard, nil)))
	assert.NotEmpty(t, errs)
	_, errs = rulefmt.Parse([]byte("groups:\n  - name: x\n    rules:\n      - alert: A\n        expr: up\n        fro: 5m\n"),
		false, model.UTF8Validation, promql, slog.New(slog.NewTextHandler(io.Discard, nil)))
	assert.NotEmpty(t, errs, "an unknown field")
}
