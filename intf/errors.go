package intf

import (
	"errors"
	"fmt"
)

// Sentinel errors shared by every mode, so a caller can test errors.Is
// whether it talks to an embedded service, an RPC server or a plugin.
var (
	// ErrInvalidArgument: a parameter is missing, malformed or out of range.
	// The error is usually a *FieldError that names the parameter.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrTimeOverflow: the time no longer fits the ID's time field (the
	// layout's lifetime is over), or lies before the epoch.
	ErrTimeOverflow = errors.New("time outside the ID's time field")
	// ErrClockBehind: the clock is behind the last time this machine id
	// issued IDs at, by more than the configured bound.
	ErrClockBehind = errors.New("clock is behind the time high-water mark")
	// ErrNotPersisted: the time high-water mark could not be written ahead
	// of the clock, so issuing would risk duplicates after a restart.
	ErrNotPersisted = errors.New("time high-water mark not persisted")
	// ErrClosed: the service was closed.
	ErrClosed = errors.New("id service closed")
	// ErrUnavailable: no server or machine id is available to issue IDs.
	ErrUnavailable = errors.New("id service unavailable")
	// ErrFenced: the generator holds no valid machine id lease right now
	// (it could not renew it in time, or lost it); it resumes by itself
	// once it holds one again. It matches ErrUnavailable too.
	ErrFenced = fmt.Errorf("machine id not held (fenced): %w", ErrUnavailable)
)

// FieldError says which parameter was wrong and what range it allows. It
// matches ErrInvalidArgument under errors.Is.
type FieldError struct {
	Field string // the parameter's name, e.g. "machine", "seq", "count"
	Value int64
	Min   int64
	Max   int64
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("invalid argument: %s %d out of range %d..%d", e.Field, e.Value, e.Min, e.Max)
}

// Is makes errors.Is(err, ErrInvalidArgument) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidArgument }

// CheckRange returns a *FieldError when v lies outside min..max.
func CheckRange(field string, v, min, max int64) error {
	if v < min || v > max {
		return &FieldError{Field: field, Value: v, Min: min, Max: max}
	}
	return nil
}
