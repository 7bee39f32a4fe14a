package restserver_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docExample is one curl command of a document and the answer it shows.
type docExample struct {
	where   string // file:line
	method  string
	path    string // with the query
	header  http.Header
	body    []byte
	include bool // curl -i: the status line and headers are shown
	out     []string
}

// curlExamples reads the "$ curl ..." commands in the fenced blocks of a
// document with the lines that follow them (up to the next command or the
// block's end). It knows the curl flags the documents use: -s, -i, -H,
// -X, --data-binary @- after "head -c N /dev/zero |".
func curlExamples(t *testing.T, file string) []docExample {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var (
		all     []docExample
		cur     *docExample
		inBlock bool
	)
	flush := func() {
		if cur != nil {
			for len(cur.out) > 0 && strings.TrimSpace(cur.out[len(cur.out)-1]) == "" {
				cur.out = cur.out[:len(cur.out)-1]
			}
			all = append(all, *cur)
			cur = nil
		}
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			flush()
			inBlock = !inBlock
		case !inBlock:
		case strings.HasPrefix(line, "$ "):
			flush()
			if strings.Contains(line, "curl ") {
				cur = parseCurl(t, file+":"+strconv.Itoa(n), strings.TrimPrefix(line, "$ "))
			}
		case cur != nil:
			cur.out = append(cur.out, line)
		}
	}
	require.NoError(t, sc.Err())
	return all
}

// parseCurl reads one command line.
func parseCurl(t *testing.T, where, cmd string) *docExample {
	t.Helper()
	if i := strings.Index(cmd, "  #"); i >= 0 { // a comment
		cmd = cmd[:i]
	}
	x := &docExample{where: where, method: http.MethodGet, header: http.Header{}}
	words := shellWords(cmd)
	if len(words) > 4 && words[0] == "head" && words[1] == "-c" && words[3] == "/dev/zero" && words[4] == "|" {
		size, err := strconv.Atoi(words[2])
		require.NoError(t, err, where)
		x.body, words = make([]byte, size), words[5:]
	}
	require.Equal(t, "curl", words[0], "%s: %s", where, cmd)
	for i := 1; i < len(words); i++ {
		switch w := words[i]; {
		case w == "-s":
		case w == "-i":
			x.include = true
		case w == "-H":
			i++
			k, v, _ := strings.Cut(words[i], ": ")
			x.header.Set(k, v)
		case w == "-X":
			i++
			x.method = words[i]
		case w == "--data-binary":
			i++
			require.Equal(t, "@-", words[i], where)
			require.NotNil(t, x.body, "%s: --data-binary reads the pipe", where)
		case strings.HasPrefix(w, "localhost:8080"):
			x.path = strings.TrimPrefix(w, "localhost:8080")
		default:
			t.Fatalf("%s: curl flag %q: teach the test", where, w)
		}
	}
	require.NotEmpty(t, x.path, where)
	return x
}

// shellWords splits a command at blanks; single quotes hold a word
// together.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words = append(words, w.String())
				w.Reset()
			}
			in = false
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// The error answers docs/rest.md and README.md show are the server's, to
// the byte: the body, and under curl -i the status and the headers shown.
// (An answer of a state a ready server is not in — 503 while starting —
// is left out.) The documents' server runs with --machine 17 and the tag
// order.
func TestDocsErrorAnswers(t *testing.T) {
	_, ts := startServer(t, testConfig(t, "--machine", "17", "--segment-tags", "order"))
	checked := 0
	for _, file := range []string{"../../../docs/rest.md", "../../../README.md"} {
		for _, x := range curlExamples(t, file) {
			if len(x.out) == 0 {
				continue
			}
			body, status, shown := x.out, 0, http.Header{}
			if x.include {
				require.True(t, strings.HasPrefix(x.out[0], "HTTP/1.1 "), "%s: %q", x.where, x.out[0])
				var err error
				status, err = strconv.Atoi(strings.Fields(x.out[0])[1])
				require.NoError(t, err, x.where)
				i := 1
				for ; i < len(x.out) && x.out[i] != ""; i++ {
					k, v, _ := strings.Cut(x.out[i], ": ")
					shown.Set(k, v)
				}
				body = x.out[i+1:]
			}
			want := strings.Join(body, "\n")
			if !strings.HasPrefix(want, `{"error"`) || status == http.StatusServiceUnavailable {
				continue
			}
			req, err := http.NewRequest(x.method, ts.URL+x.path, bytes.NewReader(x.body))
			require.NoError(t, err)
			if x.body == nil {
				req.Body = nil
			}
			req.Header = x.header
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err, x.where)
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, want+"\n", string(got), "%s: %s %s", x.where, x.method, x.path)
			if x.include {
				assert.Equal(t, status, resp.StatusCode, x.where)
				for k := range shown {
					assert.Equal(t, shown.Get(k), resp.Header.Get(k), "%s: header %s", x.where, k)
				}
			}
			checked++
		}
	}
	assert.GreaterOrEqual(t, checked, 14, "the documents' error examples were found")
}
