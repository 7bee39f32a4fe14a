//go:build race

package service_test

// raceEnabled: see race_off_test.go.
const raceEnabled = true
