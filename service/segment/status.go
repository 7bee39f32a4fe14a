package segment

import (
	"fmt"
	"time"
)

// TagStatus describes the buffers of one tag, for monitoring and tests.
type TagStatus struct {
	Tag string
	// Current is how many IDs are left in the current range; Spare, in the
	// range loaded ahead (0 when there is none).
	Current, Spare int64
	// Step is the size of the last range loaded (0 before the first);
	// DBStep the row's step, as the tag list or the last load read it
	// (known before the first load).
	Step, DBStep int64
	// Loading reports a load in progress.
	Loading bool
	// Waits counts the requests that found both buffers used up and
	// waited for a load.
	Waits int64
	// LastLoad is when the last range arrived; LastError is the error of the
	// last load, nil when it succeeded.
	LastLoad  time.Time
	LastError error
	// Issued counts the IDs of the tag handed out since the Generator
	// opened (the rate of its metric tells how long the buffers last).
	Issued int64
	// LastLoadTook is how long the last load, successful or not, waited
	// for the database (0 before the first).
	LastLoadTook time.Duration
	// CurrentRange is the range IDs are taken from (zero before the first
	// load); SpareRange the one loaded ahead, valid when HasSpare.
	CurrentRange, SpareRange Range
	HasSpare                 bool
}

// Range is one range of a tag's IDs from the database: Start..End-1, of
// which Next..End-1 are left.
type Range struct {
	Start, Next, End int64
}

// Left is how many IDs of the range are left.
func (r Range) Left() int64 { return r.End - r.Next }

// Status returns the state of tag's buffers.
func (g *Generator) Status(tag string) (TagStatus, error) {
	b, err := g.lookup(tag)
	if err != nil {
		return TagStatus{}, err
	}
	st := b.Status()
	return TagStatus{Tag: tag, Current: st.Current, Spare: st.Spare, Step: st.Step, DBStep: st.Floor,
		Loading: st.Loading, Waits: st.Waits, LastLoad: st.LastLoad, LastError: st.LastError, Issued: st.Issued,
		LastLoadTook: st.LastLoadTook, CurrentRange: Range(st.CurrentRange), SpareRange: Range(st.SpareRange), HasSpare: st.HasSpare}, nil
}

// String is a one-line summary.
func (s TagStatus) String() string {
	return fmt.Sprintf("%s: current %d, spare %d, step %d (db %d), loading %v, last error %v",
		s.Tag, s.Current, s.Spare, s.Step, s.DBStep, s.Loading, s.LastError)
}
