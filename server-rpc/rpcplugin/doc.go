// Package rpcplugin starts server-rpc as a hashicorp/go-plugin plugin
// process and talks to it: Launch returns a *Process, an intf.IdService and
// an intf.SegmentService served by the plugin over go-plugin's net/rpc
// transport with automatic mutual TLS. It is apart from package client so
// that a program that only calls an RPC server links no go-plugin code.
package rpcplugin
