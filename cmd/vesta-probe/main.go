// Command vesta-probe is the health check of the container images
// (deploy/Dockerfile): it GETs one URL and exits 0 when the answer is
// 2xx, 1 otherwise, saying why on stderr. The images have no shell and no
// curl (distroless, static), so Docker's HEALTHCHECK runs it:
//
//	vesta-probe http://127.0.0.1:8080/healthz
//	vesta-probe --ca /etc/vesta/tls/ca.pem --server-name ids.example.com https://127.0.0.1:8080/healthz
//
// It links no module but the standard library. /healthz and /readyz need
// no token, so it sends none.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run probes as args say and returns the exit code: 0 healthy, 1 not,
// 2 for bad arguments.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("vesta-probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 3*time.Second, "how long the whole probe may take")
	caFile := fs.String("ca", "", "PEM CA bundle that verifies an https server (default: the system's)")
	serverName := fs.String("server-name", "", "the name the https server's certificate must have (default: the URL's host)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: vesta-probe [flags] URL\n\nGETs URL; exit 0 on 2xx, 1 otherwise, 2 for bad arguments.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "vesta-probe: want one URL, got", fs.NArg(), "arguments (see -h)")
		return 2
	}
	u, err := url.Parse(fs.Arg(0))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "vesta-probe: URL %q: want http://host:port/path or https://...\n", fs.Arg(0))
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "vesta-probe: -timeout %s: want more than 0\n", *timeout)
		return 2
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: *serverName}
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			fmt.Fprintln(stderr, "vesta-probe: -ca:", err)
			return 2
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			fmt.Fprintf(stderr, "vesta-probe: -ca %s: no PEM certificate in it\n", *caFile)
			return 2
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := probe(ctx, &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}, u.String()); err != nil {
		fmt.Fprintln(stderr, "vesta-probe:", err)
		return 1
	}
	return 0
}

// probe GETs target and says why it is not healthy: an error, or a status
// other than 2xx (with the start of the body, which names the state).
func probe(ctx context.Context, c *http.Client, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s %s", target, resp.Status, body)
	}
	return nil
}
