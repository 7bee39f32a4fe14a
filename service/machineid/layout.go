package machineid

import (
	"fmt"
	"strings"
	"time"

	"github.com/vesta-go/vesta/intf"
)

// Layout is what a service's IDs are made of besides the machine id and
// the sequence. The nodes of one fleet (one lease prefix) must share it:
// an id handed from a node to another with an epoch 8 s later repeats the
// IDs of those 8 s, and a type or version of its own reads the fleet's
// bits otherwise. The leases store it with the fleet and refuse a node
// that does not join it (*LayoutError).
type Layout struct {
	EpochMillis int64       // Unix ms
	Type        intf.IdType // max-peak or min-granularity
	GenMethod   int64
	Version     int64
}

// Fields lists the layout's settings by their configuration names, each
// value as an operator writes it (the epoch in RFC 3339, UTC).
func (l Layout) Fields() [4][2]string {
	return [4][2]string{
		{"epoch", time.UnixMilli(l.EpochMillis).UTC().Format(time.RFC3339Nano)},
		{"type", l.Type.String()},
		{"genMethod", fmt.Sprint(l.GenMethod)},
		{"version", fmt.Sprint(l.Version)},
	}
}

// Joins says that a node of layout node may join a fleet of layout l: the
// same epoch, type and version, which decide what an ID's bits mean.
// genMethod may differ: it names the door that issued an ID, and IDs of
// different genMethods never collide.
func (l Layout) Joins(node Layout) bool {
	fleet, _ := l.differences(node)
	return len(fleet) == 0
}

// differences lists the fields that keep node out of a fleet of l, as
// "name value", l's and node's.
func (l Layout) differences(node Layout) (fleet, own []string) {
	lf, nf := l.Fields(), node.Fields()
	for i := range lf {
		if lf[i][1] != nf[i][1] && lf[i][0] != "genMethod" {
			fleet, own = append(fleet, lf[i][0]+" "+lf[i][1]), append(own, nf[i][0]+" "+nf[i][1])
		}
	}
	return fleet, own
}

// LayoutError: a fleet's layout, kept by its lease, does not take this
// node's, which refuses to start (intf.ErrInvalidArgument).
type LayoutError struct {
	Provider    string // the lease: "etcdlease"
	Prefix      string // the fleet
	Where       string // the record: "key /vesta/layout"
	Fleet, Node Layout
}

func (e *LayoutError) Error() string {
	has, ours := e.Fleet.differences(e.Node)
	return fmt.Sprintf("%s: the fleet under prefix %s has %s (%s), this node %s: every node of a fleet needs the same epoch, type and version; "+
		"set this node's to the fleet's, or give a fleet of another layout its own prefix (leasePrefix)",
		e.Provider, e.Prefix, strings.Join(has, ", "), e.Where, strings.Join(ours, ", "))
}

func (e *LayoutError) Is(target error) bool { return target == intf.ErrInvalidArgument }
