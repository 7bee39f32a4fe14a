package gctarget

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTune(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	assert.Equal(t, Server, Tune(func(string) string { return "" }))
	assert.Equal(t, Server, debug.SetGCPercent(100), "set when GOGC is unset")

	env := func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	}
	debug.SetGCPercent(150) // as the runtime reads GOGC=150 at start
	assert.Equal(t, 150, Tune(env))
	assert.Equal(t, 150, debug.SetGCPercent(150), "GOGC from the environment is left alone")
}
