// Package datadir is where a service keeps its state when its settings
// name no directory: the one default that service.New and the segment
// stores (service/backend/stores, for the SQLite file) agree on.
package datadir

import (
	"fmt"
	"os"
	"path/filepath"
)

// Default is $XDG_STATE_HOME/vesta-go, else ~/.local/state/vesta-go.
func Default() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "vesta-go"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no default data dir (%w): set dataDir", err)
	}
	return filepath.Join(home, ".local", "state", "vesta-go"), nil
}
