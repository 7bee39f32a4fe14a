package machineid_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/machineid"
)

// A node joins a fleet of its epoch, type and version, whatever its
// genMethod; the error of one that does not names only what differs.
func TestLayoutJoins(t *testing.T) {
	fleet := machineid.Layout{EpochMillis: intf.DefaultEpochMillis}
	assert.Equal(t, intf.DefaultEpochMillis, fleet.EpochMillis)
	for _, tc := range []struct {
		edit  func(*machineid.Layout)
		joins bool
		says  string
	}{
		{func(l *machineid.Layout) { l.GenMethod = 2 }, true, ""},
		{func(l *machineid.Layout) { l.EpochMillis += 8000 }, false, "has epoch 2014-12-31T16:00:00Z (key /p/layout), this node epoch 2014-12-31T16:00:08Z:"},
		{func(l *machineid.Layout) { l.Type = intf.MinGranularity }, false, "has type max-peak (key /p/layout), this node type min-granularity:"},
		{func(l *machineid.Layout) { l.Version, l.GenMethod = 1, 3 }, false, "has version 0 (key /p/layout), this node version 1:"},
	} {
		node := fleet
		tc.edit(&node)
		assert.Equal(t, tc.joins, fleet.Joins(node), "%+v", node)
		if !tc.joins {
			err := error(&machineid.LayoutError{Provider: "etcdlease", Prefix: "/p", Where: "key /p/layout", Fleet: fleet, Node: node})
			assert.True(t, errors.Is(err, intf.ErrInvalidArgument))
			assert.Contains(t, err.Error(), "etcdlease: the fleet under prefix /p "+tc.says)
		}
	}
}

func ExampleLayout_Joins() {
	fleet := machineid.Layout{EpochMillis: intf.DefaultEpochMillis}
	rest := machineid.Layout{EpochMillis: intf.DefaultEpochMillis, GenMethod: 2}
	later := machineid.Layout{EpochMillis: intf.DefaultEpochMillis + 8000}
	fmt.Println(fleet.Joins(rest), fleet.Joins(later))
	// Output: true false
}
