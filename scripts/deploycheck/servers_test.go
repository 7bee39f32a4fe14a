package deploycheck

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/syncbuf"
	"github.com/vesta-go/vesta/internal/testbin"
	"github.com/vesta-go/vesta/internal/tlstest"
)

// server is a real server-rest or server-rpc started by a test.
type server struct {
	cmd  *exec.Cmd
	log  syncbuf.Buffer
	addr map[string]string // by the name of the line that gave it
}

// startServer starts the command pkg with args and waits for the log
// lines of want (name → a regexp whose group 1 is an address).
func startServer(t *testing.T, pkg string, want map[string]*regexp.Regexp, args ...string) *server {
	t.Helper()
	bin, err := testbin.Build(pkg)
	require.NoError(t, err)
	s := &server{cmd: exec.Command(bin, args...), addr: map[string]string{}}
	stderr, err := s.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
	found := make(chan map[string]string, 1)
	go func() {
		got, told := map[string]string{}, false
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.log.Write([]byte(sc.Text() + "\n"))
			for name, re := range want {
				if m := re.FindStringSubmatch(sc.Text()); m != nil {
					got[name] = m[1]
				}
			}
			if len(got) == len(want) && !told {
				found <- got
				told = true
			}
		}
	}()
	select {
	case s.addr = <-found:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not listen; log:\n%s", pkg, s.log.String())
	}
	return s
}

// secured are the TLS files and an auth file with a client holding every
// scope a test needs, so that the servers export their TLS and guard
// metrics too.
type secured struct {
	ca    *tlstest.CA
	files tlstest.Files
	auth  string
}

const token = "vesta_deploy-test-token"

func secure(t *testing.T) secured {
	t.Helper()
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "deploy test CA")
	s := secured{ca: ca, files: tlstest.Write(t, dir, ca.Server(t), nil), auth: filepath.Join(dir, "auth.yaml")}
	require.NoError(t, os.WriteFile(s.auth, []byte(fmt.Sprintf(`clients:
  - name: everything
    tokenSHA256: %s
    scopes: [genid, decode, metrics, "segment:order"]
`, access.HashTokenHex(token))), 0o600))
	return s
}

func (s secured) args() []string {
	return []string{"--tls-cert", s.files.Cert, "--tls-key", s.files.Key, "--auth-file", s.auth}
}

func (s secured) httpClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlstest.ClientConfig(s.ca, nil)}}
}

// get GETs url with the token and returns the body, failing on a status
// other than 200.
func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	require.NoError(t, err, url)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", url, body)
	return string(body)
}

// metricNames are the names a /metrics text exports, with the series
// names of histograms and summaries (_bucket, _sum, _count).
func metricNames(t *testing.T, text string) map[string]bool {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err)
	names := map[string]bool{}
	for name, f := range fams {
		names[name] = true
		switch f.GetType().String() {
		case "HISTOGRAM", "GAUGE_HISTOGRAM":
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case "SUMMARY":
			names[name+"_sum"], names[name+"_count"] = true, true
		}
	}
	return names
}
