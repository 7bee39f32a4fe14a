package machineid_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/machineid"
)

func TestFixedMachine(t *testing.T) {
	for _, m := range []int64{0, 1, 512, 1023} {
		got, err := machineid.Fixed(m).MachineId(bg)
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	for _, m := range []int64{-1, 1024, 1 << 40} {
		_, err := machineid.Fixed(m).MachineId(bg)
		var fe *intf.FieldError
		require.ErrorAs(t, err, &fe, "%d", m)
		assert.Equal(t, "machine", fe.Field)
		assert.Equal(t, m, fe.Value)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	}
}

// hostAddrs returns a HostAddrs func listing the given CIDRs (or plain IPs
// as *net.IPAddr when they have no '/').
func hostAddrs(t *testing.T, addrs ...string) func() ([]net.Addr, error) {
	t.Helper()
	var out []net.Addr
	for _, a := range addrs {
		if ip, n, err := net.ParseCIDR(a); err == nil {
			n.IP = ip
			out = append(out, n)
			continue
		}
		ip := net.ParseIP(a)
		require.NotNil(t, ip, a)
		out = append(out, &net.IPAddr{IP: ip})
	}
	return func() ([]net.Addr, error) { return out, nil }
}

func TestIPListMachine(t *testing.T) {
	list := []string{"10.0.0.1", "10.0.0.2", " 192.168.1.5 ", "172.16.0.9"}
	cases := []struct {
		name  string
		ips   []string
		addrs []string
		want  int64
		err   string // non-empty: an error containing this
	}{
		{"match", list, []string{"127.0.0.1/8", "192.168.1.5/24"}, 2, ""},
		{"first", list, []string{"10.0.0.1/8"}, 0, ""},
		{"172.16/12 is private", list, []string{"172.16.0.9/12"}, 3, ""},
		{"ipv6 and loopback skipped", list, []string{"::1/128", "fe80::1/64", "127.0.0.1/8", "10.0.0.2/8"}, 1, ""},
		{"public address ignored", []string{"8.8.8.8", "10.0.0.1"}, []string{"8.8.8.8/32", "10.0.0.1/8"}, 1, ""},
		{"only a public address matches", []string{"8.8.8.8", "10.0.0.1"}, []string{"8.8.8.8/32", "10.9.9.9/8"}, 0, "none of this host's site-local"},
		{"no match", list, []string{"10.9.9.9/8", "127.0.0.1/8"}, 0, "10.9.9.9"},
		{"no addresses", list, nil, 0, "none of this host's site-local"},
		{"bad IP", []string{"10.0.0.1", "10.0.0.x"}, []string{"10.0.0.1/8"}, 0, `ips[1] "10.0.0.x"`},
		{"IPv6 in list", []string{"fd00::1"}, []string{"10.0.0.1/8"}, 0, "not an IPv4 address"},
		{"duplicate", []string{"10.0.0.1", "10.0.0.2", "10.0.0.1"}, []string{"10.0.0.2/8"}, 0, "twice (positions 0 and 2)"},
		{"duplicate after trimming", []string{"10.0.0.1", " 10.0.0.1"}, []string{"10.0.0.1/8"}, 0, "twice"},
		{"empty", nil, []string{"10.0.0.1/8"}, 0, "ips is empty"},
		{"empty slice", []string{}, []string{"10.0.0.1/8"}, 0, "ips is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := machineid.IPList{IPs: c.ips, HostAddrs: hostAddrs(t, c.addrs...)}
			got, err := m.MachineId(bg)
			if c.err == "" {
				require.NoError(t, err)
				assert.Equal(t, c.want, got)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Contains(t, err.Error(), c.err)
		})
	}
}

func TestIPListMachineLimits(t *testing.T) {
	// 1,024 addresses are allowed (machine 0..1023), 1,025 are not.
	ips := make([]string, 1025)
	for i := range ips {
		ips[i] = fmt.Sprintf("10.1.%d.%d", i/256, i%256)
	}
	m := machineid.IPList{IPs: ips[:1024], HostAddrs: hostAddrs(t, "10.1.3.255/16")}
	got, err := m.MachineId(bg)
	require.NoError(t, err)
	assert.Equal(t, int64(1023), got)
	m.IPs = ips
	_, err = m.MachineId(bg)
	assert.ErrorIs(t, err, intf.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "1025")
}

func TestIPListMachineHostAddrsError(t *testing.T) {
	boom := errors.New("no interfaces")
	m := machineid.IPList{IPs: []string{"10.0.0.1"}, HostAddrs: func() ([]net.Addr, error) { return nil, boom }}
	_, err := m.MachineId(bg)
	assert.ErrorIs(t, err, boom)
}

func TestIPListMachineSystemAddrs(t *testing.T) {
	// Without HostAddrs it reads this host's interfaces; a list holding
	// none of them cannot match. (Hermetic: no address is contacted.)
	m := machineid.IPList{IPs: []string{"203.0.113.7"}}
	_, err := m.MachineId(bg)
	require.Error(t, err)
}

func TestHostnameMachine(t *testing.T) {
	good := map[string]int64{
		"ids-3":            3,
		"web3.example.com": 3,
		"ids-0":            0,
		"ids-1023":         1023,
		"node7":            7,
		"7":                7,
		"web-10":           10,
		"ids-100":          100,
		"ids-12.svc.local": 12,
	}
	for name, want := range good {
		got, err := machineid.Hostname{Hostname: name}.MachineId(bg)
		if assert.NoError(t, err, name) {
			assert.Equal(t, want, got, name)
		}
	}
	bad := map[string]string{
		"ids":                         "does not end in a number",
		"ids-":                        "does not end in a number",
		"ids-1024":                    "out of machine range",
		"web.example3.com":            "does not end in a number",
		"x-99999999999999999999":      "out of machine range",
		"ids-3a":                      "does not end in a number",
		".3":                          "does not end in a number",
		"ids-100000000000000000000.x": "out of machine range",
		// A leading zero is ambiguous: web-01 and web-1 would share id 1.
		"web-01":            "leading zero",
		"ids-007":           "leading zero",
		"web03.example.com": `same machine id as "web3"`,
		"007":               `same machine id as "7"`,
		"ids-00":            `same machine id as "ids-0"`,
		"x-0001024":         "leading zero",
	}
	for name, msg := range bad {
		_, err := machineid.Hostname{Hostname: name}.MachineId(bg)
		if assert.Error(t, err, name) {
			assert.ErrorIs(t, err, intf.ErrInvalidArgument, name)
			assert.Contains(t, err.Error(), msg, name)
			assert.Contains(t, err.Error(), name, "the error quotes the host name")
		}
	}
}

// "web-01" and "web-1" must not both become machine 1: the error says why
// and what to do.
func TestHostnameMachineRefusesLeadingZeros(t *testing.T) {
	_, err := machineid.Hostname{Hostname: "web-01.example.com"}.MachineId(bg)
	require.ErrorIs(t, err, intf.ErrInvalidArgument)
	for _, want := range []string{`"web-01.example.com"`, `trailing number "01"`, `"web-1"`, "rename the hosts", "etcd"} {
		assert.Contains(t, err.Error(), want)
	}
	got, err := machineid.Hostname{Hostname: "web-1.example.com"}.MachineId(bg)
	require.NoError(t, err)
	assert.Equal(t, int64(1), got)
}

// bg is the context of calls that need none.
var bg = context.Background()
