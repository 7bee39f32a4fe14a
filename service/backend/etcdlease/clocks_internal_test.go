package etcdlease

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMachineOfKey(t *testing.T) {
	k := Keys{Prefix: "/vesta"}
	for key, want := range map[string]int64{"/vesta/machines/0": 0, "/vesta/machines/1023": 1023} {
		id, ok := k.machineOf(key)
		assert.True(t, ok, key)
		assert.Equal(t, want, id)
	}
	for _, key := range []string{"/vesta/machines/1024", "/vesta/machines/007", "/vesta/machines/x", "/vesta/marks/1", "/vesta/machines/-1"} {
		_, ok := k.machineOf(key)
		assert.False(t, ok, key)
	}
}
