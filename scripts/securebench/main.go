// Command securebench is the Go side of scripts/bench-secure.sh.
//
//	securebench setup --dir DIR
//
// writes what the secure servers of the benchmark run with into DIR: a
// CA (ca.pem), a server certificate for 127.0.0.1 (cert.pem, key.pem), an
// auth file (auth.yaml) and one token file per client (heavy.token,
// light.token, bench.token). The client heavy may take --heavy-rate IDs
// per second (burst a tenth of it); light and bench have no quota.
//
//	securebench heavy --url URL --token FILE --duration 12s
//
// drives URL/genid?count=10000 from 16 keep-alive connections as fast as
// they go (ignoring Retry-After, as a misbehaving client would) and
// prints what it got;
//
//	securebench light --url URL --token FILE --duration 10s
//
// sends 200 /genid a second on one connection and prints its errors and
// latency percentiles. The script runs them as two processes, so that
// neither's scheduling disturbs the other's measurement.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/tlstest"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: securebench setup|heavy|light [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "setup":
		err = setup(os.Args[2:])
	case "heavy":
		err = heavy(os.Args[2:])
	case "light":
		err = light(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "securebench:", err)
		os.Exit(1)
	}
}

// fatal is a tlstest.TB that stops the program.
type fatal struct{}

func (fatal) Helper() {}
func (fatal) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "securebench: "+format+"\n", args...)
	os.Exit(1)
}

func setup(args []string) error {
	fs := flag.NewFlagSet("setup", flag.ExitOnError)
	dir := fs.String("dir", "", "directory to write into")
	heavyRate := fs.Float64("heavy-rate", 200_000, "IDs per second of the client heavy")
	_ = fs.Parse(args)
	if *dir == "" {
		return fmt.Errorf("--dir is required")
	}
	ca := tlstest.NewCA(fatal{}, "securebench CA")
	tlstest.Write(fatal{}, *dir, ca.Server(fatal{}), nil)
	tlstest.WriteFile(fatal{}, filepath.Join(*dir, "ca.pem"), ca.PEM)
	var auth strings.Builder
	auth.WriteString("clients:\n")
	for _, c := range []struct {
		name  string
		quota string
	}{
		{"heavy", fmt.Sprintf("    rate: %g\n    burst: %d\n", *heavyRate, int64(*heavyRate/10))},
		{"light", ""},
		{"bench", ""},
	} {
		tok, err := access.NewToken()
		if err != nil {
			return err
		}
		tlstest.WriteFile(fatal{}, filepath.Join(*dir, c.name+".token"), []byte(tok+"\n"))
		fmt.Fprintf(&auth, "  - name: %s\n    tokenSHA256: %s\n    scopes: [genid, metrics]\n%s", c.name, access.HashTokenHex(tok), c.quota)
	}
	tlstest.WriteFile(fatal{}, filepath.Join(*dir, "auth.yaml"), []byte(auth.String()))
	return nil
}

func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// loadFlags are the flags of heavy and light.
func loadFlags(name string, args []string) (fs *flag.FlagSet, url *string, token func() (string, error), duration *time.Duration) {
	fs = flag.NewFlagSet(name, flag.ExitOnError)
	url = fs.String("url", "", "base URL of the server")
	tokenFile := fs.String("token", "", "token file (none: no token)")
	duration = fs.Duration("duration", 10*time.Second, "how long to run")
	return fs, url, func() (string, error) { return readToken(*tokenFile) }, duration
}

// heavy drives url/genid?count=batch from conns keep-alive connections
// as fast as they go, Retry-After ignored, for duration; then prints
// what it got.
func heavy(args []string) error {
	fs, url, token, duration := loadFlags("heavy", args)
	conns := fs.Int("conns", 16, "connections")
	batch := fs.Int("batch", 10_000, "?count of each request")
	_ = fs.Parse(args)
	tok, err := token()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}}
	var ok200, refused429, other atomic.Int64
	var wg sync.WaitGroup
	began := time.Now()
	for range *conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/genid?count=%d", *url, *batch), nil)
				if tok != "" {
					req.Header.Set("Authorization", "Bearer "+tok)
				}
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						other.Add(1)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					ok200.Add(1)
				case http.StatusTooManyRequests:
					refused429.Add(1)
				default:
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began).Seconds()
	fmt.Printf("heavy: %.0f batches/s answered 200 (%.0f IDs/s), %.0f/s answered 429, %d other failures\n",
		float64(ok200.Load())/elapsed, float64(ok200.Load())*float64(*batch)/elapsed, float64(refused429.Load())/elapsed, other.Load())
	return nil
}

// light sends rate /genid a second on one keep-alive connection for
// duration and prints its errors and latency percentiles.
func light(args []string) error {
	fs, url, token, duration := loadFlags("light", args)
	rate := fs.Int("rate", 200, "requests per second")
	_ = fs.Parse(args)
	tok, err := token()
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	var lat []time.Duration
	var errs []string
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	defer tick.Stop()
	for end := time.Now().Add(*duration); time.Now().Before(end); {
		<-tick.C
		req, _ := http.NewRequest(http.MethodGet, *url+"/genid", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		t0 := time.Now()
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
			}
		}
		lat = append(lat, time.Since(t0))
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	slices.Sort(lat)
	pct := func(p float64) string {
		return fmt.Sprintf("%.2f", float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds())/1000)
	}
	fmt.Printf("light: %d requests, %d errors, latency ms p50 %s p90 %s p99 %s max %s\n",
		len(lat), len(errs), pct(0.5), pct(0.9), pct(0.99), pct(1))
	if len(errs) > 0 {
		fmt.Printf("first light errors: %q\n", errs[:min(3, len(errs))])
	}
	return nil
}
