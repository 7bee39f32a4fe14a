// Package rpcplugin is the hashicorp/go-plugin glue of the vesta-go
// IdService: the handshake, the net/rpc plugin pair (Server returns the
// rpcapi.Receiver in the plugin process, Client an rpcapi.Conn in the host)
// and the plugin process's logger. It is apart from rpcapi so that a plain
// RPC client (package client) links no go-plugin code; server-rpc serves
// with it, and Launch starts server-rpc as a plugin from a host.
package rpcplugin
