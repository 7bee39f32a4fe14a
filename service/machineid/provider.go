package machineid

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/vesta-go/vesta/intf"
)

// A Provider supplies the machine id (0..1023) when a Service starts.
// Two live generators must never share one: that is the first cause of
// duplicate IDs in the field.
type Provider interface {
	MachineId(ctx context.Context) (int64, error)
}

// Fixed is a machine id given in configuration (Vesta's
// vesta.machine property).
type Fixed int64

// MachineId implements Provider.
func (m Fixed) MachineId(context.Context) (int64, error) {
	return int64(m), intf.CheckRange("machine", int64(m), 0, intf.MaxMachine)
}

// IPList is Vesta's vesta.ips provider: the machine id is the index,
// in IPs, of this host's site-local (private) IPv4 address.
type IPList struct {
	IPs []string
	// HostAddrs lists this host's addresses; nil means net.InterfaceAddrs.
	HostAddrs func() ([]net.Addr, error)
}

// MachineId implements Provider.
func (m IPList) MachineId(context.Context) (int64, error) {
	if len(m.IPs) == 0 {
		return 0, fmt.Errorf("%w: ips is empty: list every node's site-local IPv4 address", intf.ErrInvalidArgument)
	}
	if len(m.IPs) > intf.MaxMachine+1 {
		return 0, fmt.Errorf("%w: ips has %d addresses, at most %d allowed", intf.ErrInvalidArgument, len(m.IPs), intf.MaxMachine+1)
	}
	seen := make(map[string]int, len(m.IPs))
	for i, s := range m.IPs {
		ip := net.ParseIP(strings.TrimSpace(s)).To4()
		if ip == nil {
			return 0, fmt.Errorf("%w: ips[%d] %q is not an IPv4 address", intf.ErrInvalidArgument, i, s)
		}
		if j, dup := seen[ip.String()]; dup {
			return 0, fmt.Errorf("%w: ips lists %s twice (positions %d and %d)", intf.ErrInvalidArgument, ip, j, i)
		}
		seen[ip.String()] = i
	}
	addrsOf := m.HostAddrs
	if addrsOf == nil {
		addrsOf = net.InterfaceAddrs
	}
	addrs, err := addrsOf()
	if err != nil {
		return 0, fmt.Errorf("ips: listing this host's addresses: %w", err)
	}
	var local []string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.To4() == nil || !ipn.IP.IsPrivate() {
			continue
		}
		ip := ipn.IP.To4().String()
		if i, ok := seen[ip]; ok {
			return int64(i), nil
		}
		local = append(local, ip)
	}
	return 0, fmt.Errorf("%w: ips: none of this host's site-local IPv4 addresses %v is in the list", intf.ErrInvalidArgument, local)
}

// Hostname takes the machine id from the trailing number of the
// host name, as StatefulSet pods are named: "ids-3" is machine 3. A
// trailing number with a leading zero ("web-01") is refused: it is
// ambiguous with "web-1".
type Hostname struct {
	// Hostname overrides os.Hostname.
	Hostname string
}

// MachineId implements Provider.
func (m Hostname) MachineId(context.Context) (int64, error) {
	name := m.Hostname
	if name == "" {
		var err error
		if name, err = os.Hostname(); err != nil {
			return 0, fmt.Errorf("hostname: %w", err)
		}
	}
	short, _, _ := strings.Cut(name, ".")
	digits := len(short)
	for digits > 0 && short[digits-1] >= '0' && short[digits-1] <= '9' {
		digits--
	}
	if digits == len(short) {
		return 0, fmt.Errorf("%w: hostname %q does not end in a number (like ids-3)", intf.ErrInvalidArgument, name)
	}
	num := short[digits:]
	// "web-01" and "web-1" would both be machine 1: two nodes named in
	// two styles would share an id. A leading zero makes the name
	// ambiguous, so it is refused rather than read.
	if len(num) > 1 && num[0] == '0' {
		return 0, fmt.Errorf("%w: hostname %q: its trailing number %q has a leading zero, so it names the same machine id as %q: rename the hosts without leading zeros, or lease machine ids from etcd (machineProvider etcd)",
			intf.ErrInvalidArgument, name, num, short[:digits]+strings.TrimLeft(num[:len(num)-1], "0")+num[len(num)-1:])
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > intf.MaxMachine {
		return 0, fmt.Errorf("%w: hostname %q: trailing number out of machine range 0..%d", intf.ErrInvalidArgument, name, intf.MaxMachine)
	}
	return n, nil
}
