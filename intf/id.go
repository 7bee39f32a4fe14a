package intf

import "fmt"

// Field widths shared by both layouts, and the limits that follow from them.
const (
	machineBits  = 10
	MaxMachine   = 1<<machineBits - 1 // 1023
	MaxGenMethod = 3
	MaxVersion   = 1

	// DefaultEpochMillis is Vesta's epoch, 2015-01-01T00:00:00+08:00, in
	// milliseconds since the Unix epoch.
	DefaultEpochMillis int64 = 1420041600000

	// MaxBatch is the most IDs one GenIds call may ask for, in every mode.
	MaxBatch = 100_000
)

// GenMethod values: how an ID was issued.
const (
	GenMethodEmbedded = 0
	GenMethodCentral  = 1 // the RPC server
	GenMethodREST     = 2
)

// IdFields is an ID split into its fields. Its JSON uses Vesta's names.
type IdFields struct {
	Machine   int64 `json:"machine"`
	Seq       int64 `json:"seq"`
	Time      int64 `json:"time"`
	GenMethod int64 `json:"genMethod"`
	Type      int64 `json:"type"`
	Version   int64 `json:"version"`
}

func (id IdFields) String() string {
	return fmt.Sprintf("{machine:%d seq:%d time:%d genMethod:%d type:%d version:%d}",
		id.Machine, id.Seq, id.Time, id.GenMethod, id.Type, id.Version)
}

// MakeIdRequest holds the fields for MakeId. Time and Seq are always given;
// a nil field takes the value from the service's own configuration, as
// Vesta's shorter makeId arities do. MakeIdRequest{Time: t, Seq: s} is
// Vesta's makeId(time, seq); chain the With methods for the longer
// arities (MakeIdRequest{Time: t, Seq: s}.WithMachine(3) is makeId(time,
// seq, machine)), or build all six with FromFields.
type MakeIdRequest struct {
	Time      int64
	Seq       int64
	Machine   *int64
	GenMethod *int64
	Type      *int64
	Version   *int64
}

// FromFields asks for exactly the given fields: Vesta's six-argument makeId.
func FromFields(id IdFields) MakeIdRequest {
	return MakeIdRequest{Time: id.Time, Seq: id.Seq}.WithMachine(id.Machine).WithGenMethod(id.GenMethod).
		WithType(id.Type).WithVersion(id.Version)
}

// WithMachine sets the machine field.
func (r MakeIdRequest) WithMachine(v int64) MakeIdRequest { r.Machine = &v; return r }

// WithGenMethod sets the genMethod field.
func (r MakeIdRequest) WithGenMethod(v int64) MakeIdRequest { r.GenMethod = &v; return r }

// WithType sets the type field (0 max-peak, 1 min-granularity).
func (r MakeIdRequest) WithType(v int64) MakeIdRequest { r.Type = &v; return r }

// WithVersion sets the version field.
func (r MakeIdRequest) WithVersion(v int64) MakeIdRequest { r.Version = &v; return r }
