package statuspage

import (
	"strings"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/machineid"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// timeLayout is RFC 3339 in UTC with milliseconds, as the REST API writes
// times.
const timeLayout = "2006-01-02T15:04:05.000Z"

// Status is the JSON document of GET /status (docs/openapi.yaml, schema
// ServerStatus).
type Status struct {
	// Now is the server's time when the document was made.
	Now       string `json:"now"`
	NowMillis int64  `json:"nowMillis"`
	Build     string `json:"build"`
	// Server names the door: rest or rpc.
	Server string `json:"server"`
	// State is ready, starting, fenced or stopping (as /readyz);
	// StateReason says why when it is not ready.
	State       string    `json:"state"`
	StateReason string    `json:"stateReason,omitempty"`
	Machine     Machine   `json:"machine"`
	Settings    *Settings `json:"settings,omitempty"` // absent while the ID service starts
	// Layout is the layout IDs are issued with; Layouts are both, for
	// decoding any ID (its type bit picks one).
	Layout   Layout      `json:"layout"`
	Layouts  []Layout    `json:"layouts"`
	Ids      Ids         `json:"ids"`
	Clock    Clock       `json:"clock"`
	Segments SegmentMode `json:"segments"`
}

// Machine is the machine id and where it came from.
type Machine struct {
	// Id is absent until the ID service has started.
	Id *int64 `json:"id,omitempty"`
	// Provider is property, ips, hostname or etcd; Source where the key
	// that gives the id was set ("flag --machine", "default").
	Provider string `json:"provider,omitempty"`
	Source   string `json:"source,omitempty"`
	// IP is this host's address in the ips list that gave the id (provider
	// ips).
	IP string `json:"ip,omitempty"`
	// Lease is present with a machine id lease (etcd).
	Lease *Lease `json:"lease,omitempty"`
}

// Lease is the state of the machine id lease.
type Lease struct {
	// Held: the lease is held and surely valid now; Fenced is its
	// opposite, said plainly (no IDs are issued).
	Held   bool `json:"held"`
	Fenced bool `json:"fenced"`
	// TTLLeftMillis is how long the lease is surely valid from now, as
	// its last renewal measured it.
	TTLLeftMillis int64  `json:"ttlLeftMillis"`
	Fences        uint64 `json:"fences"`
	// MarkMillis is the high-water mark stored with the lease (Unix ms).
	MarkMillis           int64  `json:"markMillis"`
	Claims               uint64 `json:"claims"`
	Resumes              uint64 `json:"resumes"`
	MarkRefusals         uint64 `json:"markRefusals"`
	CoordinatorNoSpace   bool   `json:"coordinatorNoSpace"`
	UncompactedRevisions int64  `json:"uncompactedRevisions"`
}

// Settings are the service's fixed settings.
type Settings struct {
	GenMethod       int64  `json:"genMethod"`
	Version         int64  `json:"version"`
	Populator       string `json:"populator"`
	DataDir         string `json:"dataDir,omitempty"` // absent with noDataDir
	MaxBorrowMillis int64  `json:"maxBorrowMillis"`
}

// Layout is one ID layout: its bit fields, the unit of its time field
// and what it can issue.
type Layout struct {
	Type        string  `json:"type"`
	TypeBit     int     `json:"typeBit"`
	UnitMillis  int64   `json:"unitMillis"`
	EpochMillis int64   `json:"epochMillis"`
	Fields      []Field `json:"fields"`
	// CapacityPerSecond is how many IDs one machine id can issue per
	// second: the sequence budget.
	CapacityPerSecond int64 `json:"capacityPerSecond"`
	// Ends is when the time field runs out.
	Ends string `json:"ends"`
}

// Field is one bit field of the layout.
type Field struct {
	Name  string `json:"name"`
	Shift uint   `json:"shift"`
	Bits  uint   `json:"bits"`
}

// Ids counts what was issued.
type Ids struct {
	// Issued counts the IDs this server issued since it started (a
	// counter: the page computes its own per-second figure between two
	// polls).
	Issued uint64 `json:"issued"`
	// PerSecond is the rate over the last WindowSeconds (between the two
	// latest samples, taken at most once a second when /status is read;
	// 0 with WindowSeconds 0 until there are two).
	PerSecond     float64 `json:"perSecond"`
	WindowSeconds float64 `json:"windowSeconds"`
	// BudgetUsed is PerSecond's share of the layout's CapacityPerSecond
	// (0..1): above 1 cannot be, near 1 callers wait for the next unit.
	BudgetUsed float64 `json:"budgetUsed"`
	// ExhaustionWaits counts the times a unit's sequence ran out and a
	// caller waited for the next one.
	ExhaustionWaits uint64 `json:"exhaustionWaits"`
}

// Clock is the time high-water mark and the clock's health.
type Clock struct {
	// HighWaterMillis is the mark stored in the data dir (Unix ms; 0
	// without one), HighWaterAheadMillis how far it is ahead of now (it
	// is kept ~3 s ahead; negative means it is not being written).
	HighWaterMillis      int64 `json:"highWaterMillis"`
	HighWaterAheadMillis int64 `json:"highWaterAheadMillis"`
	// AheadMillis is how far the last time unit handed out begins after
	// the clock (a restart's first unit, or borrowing); 0 normally.
	AheadMillis     int64  `json:"aheadMillis"`
	ClockBackEvents uint64 `json:"clockBackEvents"`
	// LifetimeUsed is the share of the time field elapsed (0..1).
	LifetimeUsed float64 `json:"lifetimeUsed"`
}

// SegmentMode is segment mode with its tags.
type SegmentMode struct {
	// State is open, off, or opening (the store not reached yet).
	State string `json:"state"`
	Tags  []Tag  `json:"tags"`
}

// Tag is one segment tag with its two buffers.
type Tag struct {
	Tag string `json:"tag"`
	// Current is the buffer IDs are taken from (absent before the first
	// load); Next the one loaded ahead, absent when there is none yet.
	Current *Buffer `json:"current,omitempty"`
	Next    *Buffer `json:"next,omitempty"`
	// Step is the size of the last range loaded; DBStep the row's step.
	Step    int64 `json:"step"`
	DBStep  int64 `json:"dbStep"`
	Loading bool  `json:"loading"`
	// LastLoad is when the last range arrived (absent before the first),
	// LastLoadMillis how long the last load took.
	LastLoad       string  `json:"lastLoad,omitempty"`
	LastLoadMillis float64 `json:"lastLoadMillis"`
	// DBReachable is false while the last load failed, LastError then
	// says why.
	DBReachable bool   `json:"dbReachable"`
	LastError   string `json:"lastError,omitempty"`
}

// Buffer is one range of a tag: Start..Max, the next ID handed out at
// Position.
type Buffer struct {
	Start    int64 `json:"start"`
	Position int64 `json:"position"`
	Max      int64 `json:"max"`
	Step     int64 `json:"step"`
	Left     int64 `json:"left"`
}

// layoutsOf are the JSON layouts of both types for an epoch.
func layoutsOf(epochMillis int64) []Layout {
	out := make([]Layout, 0, 2)
	for _, t := range []intf.IdType{intf.MaxPeak, intf.MinGranularity} {
		l, _ := t.Layout()
		fields := make([]Field, 0, 6)
		for _, f := range l.Fields() {
			fields = append(fields, Field{Name: f.Name, Shift: f.Shift, Bits: f.Bits})
		}
		unitsPerSecond := int64(time.Second / l.Unit)
		out = append(out, Layout{
			Type: t.String(), TypeBit: int(t), UnitMillis: l.Unit.Milliseconds(), EpochMillis: epochMillis,
			Fields: fields, CapacityPerSecond: (l.Seq.Max() + 1) * unitsPerSecond,
			Ends: time.UnixMilli(epochMillis).Add(time.Duration(l.Time.Max()+1) * l.Unit).UTC().Format(timeLayout),
		})
	}
	return out
}

// machineOf fills the machine id, the address it stands for and its lease
// from the service's settings and stats.
func machineOf(m *Machine, set service.Settings, st service.Stats) {
	id := st.Machine
	m.Id = &id
	if ips, ok := set.MachineProvider.(machineid.IPList); ok && set.Lease == nil && id < int64(len(ips.IPs)) {
		m.IP = strings.TrimSpace(ips.IPs[id])
	}
	if set.Lease == nil {
		return
	}
	m.Lease = &Lease{
		Held: st.LeaseHeld, Fenced: !st.LeaseHeld, TTLLeftMillis: st.LeaseLeftMillis, Fences: st.Fences,
		MarkMillis: st.LeaseMarkMillis, Claims: st.Lease.Claims, Resumes: st.Lease.Resumes,
		MarkRefusals: st.Lease.MarkRefusals, CoordinatorNoSpace: st.Lease.NoSpace,
		UncompactedRevisions: st.Lease.UncompactedRevisions,
	}
}

// tagOf is the JSON of one tag's status.
func tagOf(tag string, st segbuf.Status) Tag {
	t := Tag{Tag: tag, Step: st.Step, DBStep: st.Floor, Loading: st.Loading,
		LastLoadMillis: float64(st.LastLoadTook) / float64(time.Millisecond), DBReachable: st.LastError == nil}
	if st.CurrentRange.End > st.CurrentRange.Start {
		b := bufferOf(st.CurrentRange)
		t.Current = &b
	}
	if st.HasSpare {
		b := bufferOf(st.SpareRange)
		t.Next = &b
	}
	if !st.LastLoad.IsZero() {
		t.LastLoad = st.LastLoad.UTC().Format(timeLayout)
	}
	if st.LastError != nil {
		t.LastError = st.LastError.Error()
	}
	return t
}

func bufferOf(r segbuf.Position) Buffer {
	return Buffer{Start: r.Start, Position: r.Next, Max: r.End - 1, Step: r.End - r.Start, Left: r.Left()}
}
