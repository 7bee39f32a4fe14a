package main

import (
	"testing"

	"github.com/vesta-go/vesta/internal/maintest"
)

func TestMain(m *testing.M) { maintest.Main(m, main) }

// --help prints the usage and exits 0; a wrong flag fails.
func TestHelpExitsZero(t *testing.T) { maintest.CheckHelp(t) }
