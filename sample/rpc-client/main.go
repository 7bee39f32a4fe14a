// Command rpc-client is a sample client of server-rpc: it dials the server
// at --addr, prints a few IDs, a batch and one ID explained (expid); with
// --tag, also a batch of segment IDs of that tag.
//
//	go run ./server-rpc --data-dir "$(mktemp -d)" --segment-tags order &
//	go run ./sample/rpc-client --addr 127.0.0.1:20880 --tag order
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vesta-go/vesta/client"
)

func main() {
	fs := flag.NewFlagSet("rpc-client", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:20880", "server address(es), comma-separated, in order of preference")
	n := fs.Int("n", 3, "how many single IDs to print")
	batch := fs.Int("batch", 5, "batch size")
	tag := fs.String("tag", "", "also take a batch of segment IDs of this tag (segment mode)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) { // usage printed
			return
		}
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout, strings.Split(*addr, ","), *n, *batch, *tag); err != nil {
		fmt.Fprintln(os.Stderr, "rpc-client:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, addrs []string, n, batch int, tag string) error {
	c, err := client.New(addrs)
	if err != nil {
		return err
	}
	defer c.Close()
	var last int64
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
