package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/statuspage"
	"github.com/vesta-go/vesta/internal/stresstest"
	"github.com/vesta-go/vesta/intf"
)

// chromium finds a Chromium or Chrome to drive; scripts/test.sh installs
// one when apt-get is there.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("SKIPPED: THE STATUS PAGE IS NOT TESTED IN A BROWSER: no chromium, chromium-browser or google-chrome on PATH " +
		"(scripts/test.sh installs chromium with apt-get when it can; or: apt-get install -y chromium)")
	return ""
}

// page drives one headless browser tab.
type page struct {
	t   *testing.T
	ctx context.Context
}

func openBrowser(t *testing.T, exe string) *page {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, // tests may run as root, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1200),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	require.NoError(t, chromedp.Do(ctx), "starting %s", exe)
	return &page{t: t, ctx: ctx}
}

// run runs browser actions, failing the test on an error.
func (p *page) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	require.NoError(p.t, chromedp.Do(ctx, actions...), what)
}

// value runs an action that reads a value.
func value[T any](p *page, what string, a chromedp.Action[T]) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	require.NoError(p.t, err, what)
	return v
}

// text is the text of the element with id.
func (p *page) text(id string) string {
	p.t.Helper()
	return value(p, "reading #"+id, chromedp.TextContent(chromedp.ID(id)))
}

// waitText waits until the element with id reads want (the page polls
// every second).
func (p *page) waitText(id, want string) {
	p.t.Helper()
	js := fmt.Sprintf("document.getElementById(%q).textContent === %q", id, want)
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		p.t.Fatalf("#%s never read %q (it reads %q): %v", id, want, p.text(id), err)
	}
}

// shown is the /status document the page rendered last, with the text of
// the elements named by ids, read in one script: the page polls every
// second, so two separate reads may straddle a refresh.
func (p *page) shown(ids ...string) (statuspage.Status, map[string]string) {
	p.t.Helper()
	idsJSON, err := json.Marshal(ids)
	require.NoError(p.t, err)
	js := fmt.Sprintf(`JSON.stringify({status: last, texts: Object.fromEntries(%s.map(id => [id, document.getElementById(id).textContent]))})`, idsJSON)
	raw := value(p, "the page's last /status", chromedp.Evaluate[string](js))
	var got struct {
		Status statuspage.Status `json:"status"`
		Texts  map[string]string `json:"texts"`
	}
	require.NoError(p.t, json.Unmarshal([]byte(raw), &got), raw)
	return got.Status, got.Texts
}

// thousands writes n as the page does (toLocaleString en-US).
func thousands(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fetch GETs url with a Bearer token ("" none) and returns status and body.
func fetchAs(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func fetchStatus(t *testing.T, base, token string) statuspage.Status {
	t.Helper()
	code, body := fetchAs(t, base+"/status", token)
	require.Equal(t, http.StatusOK, code, body)
	var st statuspage.Status
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	return st
}

// TestStatusPageInABrowser drives the real server-rest's /ui in headless
// Chromium, once per ID type (with tokens for max-peak): the figures on
// the page are those of /status, they follow IDs issued, and the decoder
// reads IDs of /genid (and a version-1 ID, negative as a Java long) as
// intf.Decode does. It saves a screenshot of each page under the test's
// temp dir (and into $UI_SCREENSHOT_DIR when set, to keep it).
//
// Stress only: two headless Chromiums, each for about 5 s of the page's
// 1 s polls. A plain run covers /status and /ui by statuspage's
// TestHandlers and restserver's TestStatusFollowsTheServer; the page's
// script runs only here.
func TestStatusPageInABrowser(t *testing.T) {
	stresstest.Only(t, "headless Chromium on the status page of two real servers")
	// Parallel: the page polls /status every second, so the test mostly
	// waits. The one test that needs the CPU to itself (a burst that must
	// outrun the clock, TestBorrowedBurstSurvivesKill9) is serial, so it
	// runs before every parallel test.
	t.Parallel()
	exe := chromium(t)
	for _, tc := range []struct {
		typ     intf.IdType
		machine int64
		auth    bool
	}{
		{intf.MaxPeak, 41, true},
		{intf.MinGranularity, 42, false},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			args := []string{"--listen", "127.0.0.1:0", "--machine", strconv.FormatInt(tc.machine, 10), "--data-dir", t.TempDir(),
				"--segment-tags", "order,coupon", "--type", tc.typ.String()}
			genTok, opsTok := "", ""
			if tc.auth {
				genTok, opsTok = tokOrders, tokOps
				path := filepath.Join(t.TempDir(), "auth.yaml")
				require.NoError(t, os.WriteFile(path, []byte(authFile(
					client("orders", tokOrders, `genid, "segment:order"`),
					client("ops", tokOps, `decode, metrics`),
				)), 0o600))
				args = append(args, "--auth-file", path)
			}
			p := start(t, args...)
			base := p.waitReady(t)
			browser := openBrowser(t, exe)
			browser.run("opening /ui", chromedp.Navigate(base+"/ui"))

			if tc.auth {
				code, body := fetchAs(t, base+"/status", "")
				require.Equal(t, http.StatusUnauthorized, code, "/status needs a token: %s", body)
				code, _ = fetchAs(t, base+"/status", genTok)
				require.Equal(t, http.StatusForbidden, code, "/status needs scope metrics")
				browser.waitText("f-state", "error")
				assert.Contains(t, browser.text("banner"), "401", "the page says why it shows nothing")
				browser.run("entering the token", chromedp.SendKeys(chromedp.ID("token"), opsTok),
					chromedp.Click(chromedp.CSS(`#token-form button`)))
			}
			browser.waitText("f-state", "ready")

			// Static figures, against a /status of our own.
			st := fetchStatus(t, base, opsTok)
			require.NotNil(t, st.Machine.Id)
			assert.Equal(t, tc.machine, *st.Machine.Id)
			assert.Equal(t, strconv.FormatInt(tc.machine, 10), browser.text("f-machine"))
			assert.Equal(t, "property", browser.text("f-provider"))
			assert.Equal(t, "flag --machine", browser.text("f-source"))
			assert.Equal(t, tc.typ.String(), st.Layout.Type)
			assert.Equal(t, st.Layout.Type, browser.text("f-type"))
			assert.Equal(t, testVersion, browser.text("f-build"))
			assert.Equal(t, st.Layout.Ends, browser.text("f-ends"))
			assert.Equal(t, thousands(uint64(st.Layout.CapacityPerSecond)), browser.text("f-capacity"))

			// IDs issued: the count on the page follows /genid.
			code, _ := fetchAs(t, base+"/genid?count=1234", genTok)
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, uint64(1234), fetchStatus(t, base, opsTok).Ids.Issued)
			browser.waitText("f-issued", "1,234")
			code, body := fetchAs(t, base+"/genid?count=5000", genTok)
			require.Equal(t, http.StatusOK, code)
			require.Len(t, strings.Fields(body), 5000)
			browser.waitText("f-issued", "6,234")
			assert.NotEqual(t, "0", browser.text("chart-max"), "the chart saw the IDs")

			// Segment buffers: order's position follows /segment/order.
			code, _ = fetchAs(t, base+"/segment/order?count=7", genTok)
			require.Equal(t, http.StatusOK, code)
			var order *statuspage.Tag
			for _, tag := range fetchStatus(t, base, opsTok).Segments.Tags {
				if tag.Tag == "order" {
					order = &tag
				}
			}
			require.NotNil(t, order, "order in /status")
			require.NotNil(t, order.Current)
			assert.Equal(t, int64(8), order.Current.Position, "7 IDs from 1 taken")
			browser.waitText("f-segments", browser.segmentsText(fetchStatus(t, base, opsTok)))
			assert.Contains(t, browser.text("f-segments"), "order")
			assert.Contains(t, browser.text("f-segments"), "coupon")

			// Every figure on the page is the /status it read last.
			shown, texts := browser.shown("f-issued", "f-clockback", "f-hw", "f-now", "f-genmethod")
			assert.Equal(t, thousands(shown.Ids.Issued), texts["f-issued"])
			assert.Equal(t, thousands(shown.Clock.ClockBackEvents), texts["f-clockback"])
			assert.Equal(t, time.UnixMilli(shown.Clock.HighWaterMillis).UTC().Format("2006-01-02T15:04:05.000Z"), texts["f-hw"])
			assert.Greater(t, shown.Clock.HighWaterAheadMillis, int64(0), "the mark is stored ahead of the clock")
			assert.Equal(t, shown.Now, texts["f-now"])
			assert.Equal(t, fmt.Sprintf("%d / %d", shown.Settings.GenMethod, shown.Settings.Version), texts["f-genmethod"])

			// The decoder, on an ID of /genid and on a version-1 ID.
			_, body = fetchAs(t, base+"/genid", genTok)
			id, err := strconv.ParseInt(body, 10, 64)
			require.NoError(t, err, body)
			browser.checkDecode(id)
			l, err := tc.typ.Layout()
			require.NoError(t, err)
			v1, _, err := intf.Encode(intf.IdFields{Machine: 1023, Seq: l.Seq.Max(), Time: 123456, GenMethod: 3, Type: int64(tc.typ), Version: 1})
			require.NoError(t, err)
			require.Less(t, v1, intf.Id(0), "bit 63 set: negative as a Java long")
			browser.checkDecode(int64(v1))
			browser.run("decoding junk", chromedp.SetValue(chromedp.ID("decode-input"), "12x"), chromedp.Click(chromedp.ID("decode-btn")))
			browser.waitText("d-error", `not a decimal integer: "12x"`)
			browser.checkDecode(id) // the error clears
			assert.Empty(t, browser.text("d-error"))

			browser.screenshot(tc.typ.String())
		})
	}
}

// segmentsText is what the segment table reads for st: its cells' text
// run together, as textContent gives it.
func (p *page) segmentsText(st statuspage.Status) string {
	var b strings.Builder
	for _, tag := range st.Segments.Tags {
		for i, buf := range []*statuspage.Buffer{tag.Current, tag.Next} {
			if i == 0 {
				b.WriteString(tag.Tag + "current")
			} else {
				b.WriteString("next")
			}
			if buf != nil {
				for _, n := range []int64{buf.Start, buf.Position, buf.Max, buf.Step, buf.Left} {
					b.WriteString(thousands(uint64(n)))
				}
			} else if tag.Loading {
				b.WriteString("loading…")
			} else {
				b.WriteString("–")
			}
			if i == 0 {
				last := tag.LastLoad
				if last == "" {
					last = "never"
				}
				reach := "reachable"
				if !tag.DBReachable {
					reach = "UNREACHABLE"
				}
				fmt.Fprintf(&b, "%s / %s%s%.1f ms%s", thousands(uint64(tag.Step)), thousands(uint64(tag.DBStep)), last, tag.LastLoadMillis, reach)
			} else if !tag.DBReachable {
				b.WriteString(tag.LastError)
			}
		}
	}
	return b.String()
}

// checkDecode pastes id into the decoder and compares every field with
// intf.Decode.
func (p *page) checkDecode(id int64) {
	p.t.Helper()
	want, _ := intf.Decode(intf.Id(id))
	p.run("decoding "+strconv.FormatInt(id, 10), chromedp.SetValue(chromedp.ID("decode-input"), strconv.FormatInt(id, 10)),
		chromedp.Click(chromedp.ID("decode-btn")))
	p.waitText("d-machine", strconv.FormatInt(want.Machine, 10))
	assert.Equal(p.t, strconv.FormatInt(want.Seq, 10), p.text("d-seq"), "seq of %d", id)
	assert.Equal(p.t, strconv.FormatInt(want.Time, 10), p.text("d-time"), "time of %d", id)
	assert.Equal(p.t, strconv.FormatInt(want.GenMethod, 10), p.text("d-genMethod"), "genMethod of %d", id)
	assert.Equal(p.t, strconv.FormatInt(want.Version, 10), p.text("d-version"), "version of %d", id)
	assert.Equal(p.t, fmt.Sprintf("%s (%d)", intf.IdType(want.Type), want.Type), p.text("d-type"), "type of %d", id)
	assert.Equal(p.t, intf.Id(id).Time(intf.DefaultEpochMillis).Format("2006-01-02T15:04:05.000Z"), p.text("d-timestamp"), "timestamp of %d", id)
	assert.Equal(p.t, fmt.Sprintf("%064b", uint64(id)), p.text("d-bits"))
}

// screenshot saves the page as a PNG under the test's temp dir, and in
// $UI_SCREENSHOT_DIR when set.
func (p *page) screenshot(name string) {
	p.t.Helper()
	png := value(p, "screenshot", chromedp.FullScreenshot(100))
	path := filepath.Join(p.t.TempDir(), "status-"+name+".png")
	require.NoError(p.t, os.WriteFile(path, png, 0o600))
	p.t.Logf("screenshot of /ui: %s", path)
	if dir := os.Getenv("UI_SCREENSHOT_DIR"); dir != "" {
		keep := filepath.Join(dir, "status-"+name+".png")
		require.NoError(p.t, os.WriteFile(keep, png, 0o644))
		p.t.Logf("screenshot kept: %s", keep)
	}
}
