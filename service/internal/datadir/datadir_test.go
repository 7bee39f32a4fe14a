package datadir_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/internal/datadir"
)

func TestDefault(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	d, err := datadir.Default()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/state", "vesta-go"), d)

	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", home)
	d, err = datadir.Default()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, ".local", "state", "vesta-go"), d)
}
