// Command rest calls a running server-rest with nothing but net/http and
// intf (stdlib only), whose Id reads the IDs that JSON carries as
// strings: it takes one ID, a batch, and explains the batch's first ID;
// with --tag, it also takes a batch of segment IDs of that tag.
//
//	go run ./server-rest --data-dir "$(mktemp -d)" --segment-tags order &
//	go run ./sample/rest --url http://localhost:8080 -n 3 --tag order
//
// Against a server with TLS and an auth file (docs/security.md), --ca-file
// trusts its certificate's CA and the token comes from --token-file or
// VESTA_TOKEN (never a flag: ps shows flags):
//
//	VESTA_TOKEN=$(cat orders.token) go run ./sample/rest --url https://ids-1:8080 --ca-file ca.pem
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/vesta-go/vesta/intf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Getenv("VESTA_TOKEN")); err != nil && !errors.Is(err, flag.ErrHelp) { // --help: usage printed, exit 0
		fmt.Fprintln(os.Stderr, "rest:", err)
		os.Exit(1)
	}
}

// expId is the JSON of /expid. IDs travel as strings in JSON:
// intf.Id reads them (and writes them) so.
type expId struct {
	Machine   int64   `json:"machine"`
	Seq       int64   `json:"seq"`
	Time      int64   `json:"time"`
	GenMethod int64   `json:"genMethod"`
	Type      int64   `json:"type"`
	Version   int64   `json:"version"`
	Id        intf.Id `json:"id"`
	TypeName  string  `json:"typeName"`
	Timestamp string  `json:"timestamp"`
}

// run is the sample; envToken is $VESTA_TOKEN.
func run(ctx context.Context, args []string, out io.Writer, envToken string) error {
	fs := flag.NewFlagSet("rest", flag.ContinueOnError)
	base := fs.String("url", "http://localhost:8080", "base URL of server-rest")
	n := fs.Int("n", 5, "batch size")
	tag := fs.String("tag", "", "also take a batch of segment IDs of this tag (segment mode)")
	caFile := fs.String("ca-file", "", "PEM CA of the server's certificate (https URLs)")
	tokenFile := fs.String("token-file", "", "file holding the token (else $VESTA_TOKEN, if set)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c := client{base: strings.TrimSuffix(*base, "/"), http: &http.Client{Timeout: 10 * time.Second}, token: envToken}
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			return fmt.Errorf("--ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("--ca-file %s: no PEM certificate", *caFile)
		}
		c.http.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		c.token = strings.TrimSpace(string(b))
	}

	one, err := c.get(ctx, "/genid", "text/plain")
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(string(one), 10, 64)
	if err != nil {
		return fmt.Errorf("genid answered %q: %w", one, err)
	}
	fmt.Fprintln(out, "genid:", id)

	var batch []intf.Id
	if err := c.getJSON(ctx, "/genid?count="+strconv.Itoa(*n), &batch); err != nil {
		return err
	}
	if len(batch) == 0 {
		return errors.New("genid returned an empty batch")
	}
	fmt.Fprintf(out, "batch of %d: %s\n", len(batch), joinIds(batch))

	var x expId
	if err := c.getJSON(ctx, "/expid?id="+batch[0].String(), &x); err != nil {
		return err
	}
	fmt.Fprintf(out, "expid %s: machine=%d seq=%d time=%d (%s) genMethod=%d type=%d (%s) version=%d\n",
		x.Id, x.Machine, x.Seq, x.Time, x.Timestamp, x.GenMethod, x.Type, x.TypeName, x.Version)

	if *tag == "" {
		return nil
	}
	var segment []intf.Id
	if err := c.getJSON(ctx, "/segment/"+url.PathEscape(*tag)+"?count="+strconv.Itoa(*n), &segment); err != nil {
		return err
	}
	fmt.Fprintf(out, "segment %s: %s\n", *tag, joinIds(segment))
	return nil
}

func joinIds(ids []intf.Id) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return strings.Join(s, " ")
}

// client is a minimal server-rest client.
type client struct {
	base  string
	http  *http.Client
	token string // sent as Authorization: Bearer, when set
}

// get returns the body of a 200 answer; any other status is an error
// carrying the server's JSON error message.
func (c client) get(ctx context.Context, path, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(body))
		}
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, e.Error)
	}
	return body, nil
}

func (c client) getJSON(ctx context.Context, path string, v any) error {
	body, err := c.get(ctx, path, "application/json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}
