package config

import (
	"net"
)

// KeyAdminListen is where server-rpc serves /metrics, /healthz, /readyz
// and the status page (docs/rpc.md); "" (the default) serves none.
const KeyAdminListen = "adminListen"

// GroupAdmin is the admin listener of a server whose own port speaks no
// HTTP (server-rpc). server-rest serves the same endpoints on its port
// and does not register it.
const GroupAdmin Group = "admin"

// adminKeys are the keys of GroupAdmin.
func adminKeys() []Key {
	return []Key{
		{Name: KeyAdminListen, Flag: "admin-listen", Env: "VESTA_ADMIN_LISTEN", Group: GroupAdmin,
			Usage: "host:port of the admin HTTP listener (/metrics, /healthz, /readyz, /status, /ui), with the listener's TLS and the metrics scope; unset: none"},
	}
}

// adminListen reads adminListen: unset is off; set, it must be a
// host:port other than listen's.
func (r *reader) adminListen(listen string) string {
	const wantAddr = "host:port with port 0..65535, e.g. 127.0.0.1:9090, and not the listen address"
	addr := r.given(KeyAdminListen, "", wantAddr)
	if addr == "" || r.err != nil {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = parsePort(port)
	}
	if err != nil {
		r.fail(KeyAdminListen, addr, wantAddr)
		return ""
	}
	// The same fixed port as listen's on an overlapping host would fail to
	// bind only once the service has started: say it now.
	if lhost, lport, lerr := net.SplitHostPort(listen); lerr == nil && port != "0" && port == lport &&
		(host == lhost || host == "" || lhost == "" || host == "0.0.0.0" || lhost == "0.0.0.0" || host == "::" || lhost == "::") {
		r.fail(KeyAdminListen, addr, wantAddr)
		return ""
	}
	return addr
}
