// Command embedded generates IDs inside its own process with the embedded
// service and prints each with its decoded fields and time.
//
//	go run ./sample/embedded -n 5 -machine 7
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) { // --help: usage printed, exit 0
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("embedded", flag.ContinueOnError)
	n := fs.Int("n", 5, "how many IDs to generate")
	machine := fs.Int64("machine", 7, "machine id 0..1023")
	typ := fs.String("type", "max-peak", "max-peak or min-granularity")
	dataDir := fs.String("data-dir", "", "data dir for the time high-water mark (default: a fresh temp dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	t, err := intf.ParseIdType(*typ)
	if err != nil {
		return err
	}
	dir := *dataDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "vesta-sample-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	ctx := context.Background()
	svc, err := service.New(ctx, service.Settings{Machine: *machine, Type: t, DataDir: dir})
	if err != nil {
		return err
	}
	defer svc.Close()

	for i := 0; i < *n; i++ {
		id, err := svc.GenId(ctx)
		if err != nil {
			return err
		}
		f, err := svc.ExpId(ctx, id)
		if err != nil {
			return err
		}
		at, err := svc.TransTime(ctx, f.Time, intf.IdType(f.Type))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%d  machine=%d seq=%d time=%d genMethod=%d type=%d version=%d  %s\n",
			id, f.Machine, f.Seq, f.Time, f.GenMethod, f.Type, f.Version, at.Format("2006-01-02T15:04:05.000Z07:00"))
	}
	return nil
}
