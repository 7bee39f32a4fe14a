// Package pluginwire is the hashicorp/go-plugin glue both sides of a
// vesta-go plugin share: the handshake, the net/rpc plugin pair (Server
// returns the rpcapi.Receiver in the plugin process, Client an rpcapi.Conn
// in the host) and the plugin process's logger. server-rpc --plugin serves
// with it; rpcplugin.Launch starts a plugin with it.
package pluginwire
