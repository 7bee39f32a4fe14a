package etcdlease

import (
	"go.etcd.io/etcd/api/v3/mvccpb"

	"strconv"
	"strings"

	"github.com/vesta-go/vesta/intf"
)

// Keys is the layout of the keys under a prefix (see the package comment).
type Keys struct{ Prefix string }

// Machines is the directory of the machine keys.
func (k Keys) Machines() string { return k.Prefix + "/machines/" }

// Machine is the key a holder of id creates under its lease.
func (k Keys) Machine(id int64) string { return k.Machines() + strconv.FormatInt(id, 10) }

// Marks is the directory of the time high-water marks.
func (k Keys) Marks() string { return k.Prefix + "/marks/" }

// Mark is the key of id's high-water mark (Unix ms).
func (k Keys) Mark(id int64) string { return k.Marks() + strconv.FormatInt(id, 10) }

// Clocks is the directory of the nodes' clock reports.
func (k Keys) Clocks() string { return k.Prefix + "/clocks/" }

// Clock is the key of node's clock report (Unix ms).
func (k Keys) Clock(node string) string { return k.Clocks() + node }

// machineOf parses a key under Machines; ok is false for anything else.
func (k Keys) machineOf(key string) (id int64, ok bool) {
	s, found := strings.CutPrefix(key, k.Machines())
	if !found {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 || id > intf.MaxMachine || strconv.FormatInt(id, 10) != s {
		return 0, false
	}
	return id, true
}

// mvccKV is a key-value pair as etcd returns it.
type mvccKV = mvccpb.KeyValue
