// Command plugin-host is a sample go-plugin host: it launches server-rpc as
// a plugin (building it first unless --plugin gives a binary), prints a few
// IDs and a batch, and stops the plugin.
//
//	go run ./sample/plugin-host                 # builds ./server-rpc into a temp dir
//	go run ./sample/plugin-host --plugin ./bin/server-rpc --machine 7
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/vesta-go/vesta/server-rpc/rpcplugin"
)

func main() {
	fs := flag.NewFlagSet("plugin-host", flag.ContinueOnError)
	path := fs.String("plugin", "", "server-rpc binary to launch (default: go build ./server-rpc into a temp dir)")
	machine := fs.Int64("machine", 1, "machine id of the plugin")
	dataDir := fs.String("data-dir", "", "the plugin's data dir (default: a temp dir)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) { // usage printed
			return
		}
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *path, *machine, *dataDir); err != nil {
		fmt.Fprintln(os.Stderr, "plugin-host:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, path string, machine int64, dataDir string) error {
	tmp, err := os.MkdirTemp("", "plugin-host-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if path == "" {
		path = filepath.Join(tmp, "server-rpc")
		fmt.Fprintln(w, "building", path)
		build := exec.CommandContext(ctx, "go", "build", "-o", path, "github.com/vesta-go/vesta/server-rpc")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build server-rpc: %w", err)
		}
	}
	if dataDir == "" {
		dataDir = filepath.Join(tmp, "data")
	}
	p, err := rpcplugin.Launch(ctx, path, rpcplugin.Config{Machine: &machine, DataDir: dataDir})
	if err != nil {
		return err
	}
	defer p.Close()
	for range 3 {
		id, err := p.GenId(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "genid ", id)
	}
	ids, err := p.GenIds(ctx, 5)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "genids", ids)
	id, err := p.ExpId(ctx, ids[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "expid  %d = %v\n", ids[0], id)
	if err := p.Close(); err != nil {
		return err
	}
	fmt.Fprintln(w, "plugin stopped")
	return nil
}
