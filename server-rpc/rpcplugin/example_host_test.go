package rpcplugin_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/vesta-go/vesta/server-rpc/rpcplugin"
)

// Launch starts the server-rpc binary as a plugin with its own data dir;
// Close stops it (the plugin stores its high-water mark first). Not run
// here: it needs a built server-rpc (see sample/plugin-host, and TestPlugin
// for a run).
func ExampleLaunch() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	machine := int64(7)
	p, err := rpcplugin.Launch(ctx, "/usr/local/bin/server-rpc", rpcplugin.Config{Machine: &machine, DataDir: "/var/lib/myapp/vesta"})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	id, err := p.GenId(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id)
}
