package gctarget_test

import (
	"fmt"
	"runtime/debug"

	"github.com/vesta-go/vesta/internal/gctarget"
)

func ExampleTune() {
	defer debug.SetGCPercent(debug.SetGCPercent(100)) // leave the test binary as it was
	noEnv := func(string) string { return "" }
	fmt.Println(gctarget.Tune(noEnv))
	// Output: 400
}
