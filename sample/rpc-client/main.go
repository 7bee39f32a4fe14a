// Command rpc-client is a sample client of server-rpc: it dials the server
// at --addr, prints a few IDs, a batch and one ID explained (expid); with
// --tag, also a batch of segment IDs of that tag.
//
//	go run ./server-rpc --data-dir "$(mktemp -d)" --segment-tags order &
//	go run ./sample/rpc-client --addr 127.0.0.1:20880 --tag order
//
// Against a secure server (docs/security.md): --ca-file trusts its
// certificate's CA (TLS), --cert-file and --key-file present a client
// certificate (mutual TLS), and the token comes from --token-file or the
// environment variable VESTA_TOKEN — never from a flag, which ps shows.
//
//	VESTA_TOKEN=$(cat orders.token) go run ./sample/rpc-client --ca-file ca.pem --addr ids.internal:20880
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vesta-go/vesta/client"
	"github.com/vesta-go/vesta/intf"
)

func main() {
	fs := flag.NewFlagSet("rpc-client", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:20880", "server address(es), comma-separated, in order of preference")
	n := fs.Int("n", 3, "how many single IDs to print")
	batch := fs.Int("batch", 5, "batch size")
	tag := fs.String("tag", "", "also take a batch of segment IDs of this tag (segment mode)")
	var sec security
	fs.StringVar(&sec.caFile, "ca-file", "", "PEM CA of the server's certificate: dial with TLS")
	fs.StringVar(&sec.certFile, "cert-file", "", "PEM client certificate (mutual TLS; with --key-file and --ca-file)")
	fs.StringVar(&sec.keyFile, "key-file", "", "PEM key of --cert-file")
	fs.StringVar(&sec.tokenFile, "token-file", "", "file holding the token (else $VESTA_TOKEN, if set)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) { // usage printed
			return
		}
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts, err := sec.options(os.Getenv("VESTA_TOKEN"))
	if err == nil {
		err = run(ctx, os.Stdout, strings.Split(*addr, ","), *n, *batch, *tag, opts...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rpc-client:", err)
		os.Exit(1)
	}
}

// security is where the client's TLS and token come from.
type security struct {
	caFile, certFile, keyFile, tokenFile string
}

// options are the client options of s; envToken is $VESTA_TOKEN.
func (s security) options(envToken string) ([]client.Option, error) {
	var opts []client.Option
	if s.caFile != "" {
		pem, err := os.ReadFile(s.caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s: no PEM certificate", s.caFile)
		}
		cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if s.certFile != "" || s.keyFile != "" {
			pair, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
			if err != nil {
				return nil, fmt.Errorf("--cert-file/--key-file: %w", err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		opts = append(opts, client.WithTLS(cfg))
	} else if s.certFile != "" || s.keyFile != "" {
		return nil, errors.New("--cert-file and --key-file need --ca-file (TLS)")
	}
	token := envToken
	if s.tokenFile != "" {
		b, err := os.ReadFile(s.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		opts = append(opts, client.WithToken(token))
	}
	return opts, nil
}

func run(ctx context.Context, w io.Writer, addrs []string, n, batch int, tag string, opts ...client.Option) error {
	c, err := client.New(addrs, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	var last intf.Id
	for range n {
		if last, err = c.GenId(ctx); err != nil {
			return err
		}
		fmt.Fprintln(w, "genid ", last)
	}
	ids, err := c.GenIds(ctx, batch)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "genids", ids)
	id, err := c.ExpId(ctx, last)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "expid  %d = %v\n", last, id)
	t, err := c.TransTime(ctx, id.Time, 0)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "time  ", t.Format(time.RFC3339))
	if tag == "" {
		return nil
	}
	seg, err := c.NextIds(ctx, tag, batch) // *client.Client is an intf.SegmentService too
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "segment", tag, seg)
	return nil
}
