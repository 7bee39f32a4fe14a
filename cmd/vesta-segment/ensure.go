package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vesta-go/vesta/service/segment/segstore"
)

// ensureRow is create-tag's one rule for a plain tag and a period tag
// alike: create the row, or accept the row already there when it matches
// what the command asks (so that a deployment step can run it every
// time). createErr is what creating said; a row that differs is an error
// naming each difference (diffs of the row), and the command never
// changes a row. It returns the row found, or ok false when the row was
// created (createErr nil).
func ensureRow[T any](createErr error, list func() ([]T, error), is func(T) bool, diffs func(T) []string) (row T, ok bool, err error) {
	if createErr == nil {
		return row, false, nil
	}
	if !errors.Is(createErr, segstore.ErrTagExists) {
		return row, false, createErr
	}
	rows, lerr := list()
	if lerr != nil {
		return row, false, errors.Join(createErr, lerr)
	}
	i := slices.IndexFunc(rows, is)
	if i < 0 { // removed since: say what creating said
		return row, false, createErr
	}
	if d := diffs(rows[i]); len(d) > 0 {
		return row, false, fmt.Errorf("%w, and differs from what create-tag asks: %s. The command changes no row: "+
			"run it with the row's values, or change the row with SQL (docs/segment.md)", createErr, strings.Join(d, "; "))
	}
	return rows[i], true, nil
}
