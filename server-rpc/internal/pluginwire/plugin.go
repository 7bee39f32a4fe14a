package pluginwire

import (
	"errors"
	"net/rpc"

	"github.com/hashicorp/go-plugin"

	"github.com/vesta-go/vesta/internal/rpcapi"
)

// Handshake is the go-plugin handshake of the vesta-go plugin. The host
// sets the cookie in the plugin's environment; a binary started by hand
// without it says it is a plugin and exits. Raise ProtocolVersion when the
// wire types change incompatibly.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "VESTA_GO_PLUGIN",
	MagicCookieValue: "8f3c2e1d-vesta-go-idservice",
}

// PluginName is the name the IdService is dispensed under.
const PluginName = "idservice"

// pluginServiceName is the name go-plugin registers a net/rpc plugin's
// receiver under.
const pluginServiceName = "Plugin"

// Plugin is the go-plugin net/rpc plugin of the IdService: Server returns
// the rpcapi.Receiver (in the plugin process), Client returns an
// rpcapi.Conn (in the host).
type Plugin struct {
	// Receiver serves the calls; only the plugin process sets it.
	Receiver *rpcapi.Receiver
}

var _ plugin.Plugin = (*Plugin)(nil)

// Server returns the receiver go-plugin registers.
func (p *Plugin) Server(*plugin.MuxBroker) (any, error) {
	if p.Receiver == nil {
		return nil, errors.New("vesta plugin: no receiver to serve")
	}
	return p.Receiver, nil
}

// Client returns the IdService of the plugin: an *rpcapi.Conn over c.
func (*Plugin) Client(_ *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return rpcapi.NewConn(c, pluginServiceName), nil
}

// PluginSet is the plugin set to serve (with r) or to launch (with nil).
func PluginSet(r *rpcapi.Receiver) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &Plugin{Receiver: r}}
}
