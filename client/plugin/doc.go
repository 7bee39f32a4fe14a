// Package plugin starts server-rpc as a hashicorp/go-plugin plugin process
// and talks to it: Launch returns a *Plugin, an intf.IdService and an
// intf.SegmentService served by the plugin over go-plugin's net/rpc
// transport, with the same call code (rpcapi.Conn) as package client.
//
// It is apart from package client so that programs that only call an RPC
// server link no go-plugin, gRPC or hclog code.
package plugin
