package service

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMissingDirs(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	assert.Equal(t, []string{deep, filepath.Join(root, "a", "b"), filepath.Join(root, "a")}, missingDirs(deep),
		"every directory MkdirAll will create, so that each one's entry is fsynced in its parent")
	assert.Empty(t, missingDirs(root))
}
