package leasekit

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/machineid"
)

// FleetLayout is the record a fleet keeps with its coordinator (etcd: <prefix>/layout;
// PostgreSQL: a row of <table>_layout), written by its first node, never deleted.
type FleetLayout struct {
	machineid.Layout
	Lead time.Duration // the largest Holder.Lead of the nodes that joined; never lowered
}

// layoutRecord is a FleetLayout as stored: JSON, both coordinators.
type layoutRecord struct {
	EpochMillis int64  `json:"epochMillis"`
	Type        string `json:"type"`
	GenMethod   int64  `json:"genMethod"`
	Version     int64  `json:"version"`
	LeadMillis  int64  `json:"leadMillis"`
}

func (f FleetLayout) record() []byte {
	b, _ := json.Marshal(layoutRecord{f.EpochMillis, f.Type.String(), f.GenMethod, f.Version, f.Lead.Milliseconds()})
	return b
}

// parseLayout reads a stored record, or fails naming where it is and what it holds.
func (c Config) parseLayout(b []byte) (FleetLayout, error) {
	var r layoutRecord
	err := json.Unmarshal(b, &r)
	t, terr := intf.ParseIdType(r.Type)
	if err != nil || terr != nil || r.EpochMillis <= 0 || r.LeadMillis < 0 {
		return FleetLayout{}, fmt.Errorf("%s: the fleet's layout (%s) is corrupt (%q): delete it, and the next node writes its own layout there", c.Provider, c.Layout, b)
	}
	return FleetLayout{Layout: machineid.Layout{EpochMillis: r.EpochMillis, Type: t, GenMethod: r.GenMethod, Version: r.Version},
		Lead: time.Duration(r.LeadMillis) * time.Millisecond}, nil
}
