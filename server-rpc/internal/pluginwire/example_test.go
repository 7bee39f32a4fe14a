package pluginwire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/hashicorp/go-plugin"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/internal/pluginwire"
	"github.com/vesta-go/vesta/service"
)

// A plugin process serves its Receiver with PluginSet and the Handshake;
// the host (Launch, which starts server-rpc --plugin)
// starts it with the same Handshake and dispenses PluginName. This is the
// main of such a process. Not run here: plugin.Serve exits a process that
// a go-plugin host did not start.
func ExamplePluginSet() {
	svc, err := service.New(context.Background(), service.Settings{
		Machine: 7, GenMethod: intf.GenMethodEmbedded, DataDir: "/var/lib/myapp/vesta",
		Logger: pluginwire.PluginLogger(os.Stderr, slog.LevelInfo), // the host re-logs these lines
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close() // stores the high-water mark once the host stops the plugin

	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: pluginwire.Handshake,
		Plugins:         pluginwire.PluginSet(rpcapi.NewReceiver(svc, 1000)),
	})
}

// Plugin pairs the two ends: in the plugin process Server hands go-plugin
// the Receiver; in the host Client wraps the connection in an
// rpcapi.Conn, an intf.IdService. Here both ends run in one process over
// a loopback connection, as go-plugin's own tests pair them, instead of
// across a process boundary.
func ExamplePlugin() {
	quiet := slog.New(slog.DiscardHandler)
	svc, err := service.New(context.Background(), service.Settings{
		Machine: 7, GenMethod: intf.GenMethodEmbedded, NoDataDir: true, Logger: quiet,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close()

	hostConn, pluginConn, err := connPair()
	if err != nil {
		fmt.Println(err)
		return
	}
	// The plugin's end.
	srv := &plugin.RPCServer{Plugins: pluginwire.PluginSet(rpcapi.NewReceiver(svc, 1000)),
		Stdout: strings.NewReader(""), Stderr: strings.NewReader("")}
	go srv.ServeConn(pluginConn)

	// The host's end: no receiver, it only dispenses.
	host, err := plugin.NewRPCClient(hostConn, pluginwire.PluginSet(nil))
	if err != nil {
		fmt.Println(err)
		pluginConn.Close()
		return
	}
	defer host.Close()
	raw, err := host.Dispense(pluginwire.PluginName)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := raw.(intf.IdService)

	ctx := context.Background()
	id, err := ids.GenId(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fields, _ := ids.ExpId(ctx, id)
	fmt.Println("machine", fields.Machine, "genMethod", fields.GenMethod)
	// Output:
	// machine 7 genMethod 0
}

// connPair returns the two ends of a loopback TCP connection.
func connPair() (a, b net.Conn, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	a, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	b, err = ln.Accept()
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

// PluginLogger writes the JSON lines a go-plugin host reads from the
// plugin's stderr: hclog's @level, @message and @timestamp keys, so the
// host re-logs each line at its level.
func ExamplePluginLogger() {
	var stderr bytes.Buffer
	log := pluginwire.PluginLogger(&stderr, slog.LevelInfo)
	log.Debug("not written: below the level")
	log.Warn("disk almost full", "free", "3%")

	var line map[string]any
	if err := json.Unmarshal(stderr.Bytes(), &line); err != nil {
		fmt.Println(err)
		return
	}
	_, hasTime := line["@timestamp"]
	fmt.Println(line["@level"], line["@message"], line["free"], hasTime)
	// Output:
	// warn disk almost full 3% true
}
