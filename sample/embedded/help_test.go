package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vesta-go/vesta/internal/maintest"
)

func TestMain(m *testing.M) { maintest.Main(m, main) }

// --help prints the usage and exits 0, as a user's shell sees it.
func TestHelpExitsZero(t *testing.T) {
	r := maintest.Run(t, "--help")
	assert.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	assert.Contains(t, r.Stdout+r.Stderr, "Usage")
	r = maintest.Run(t, "--no-such-flag")
	assert.NotEqual(t, 0, r.Code, "a wrong flag fails")
}
