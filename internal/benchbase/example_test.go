package benchbase_test

import (
	"fmt"

	"github.com/vesta-go/vesta/internal/benchbase"
)

// A benchmark compares with the baseline in the same run:
//
//	func BenchmarkBareAtomic(b *testing.B) { benchbase.BareAtomic(b) }
func ExampleParallelism() {
	fmt.Println(benchbase.Parallelism() >= 1)
	// Output: true
}
