package rpcproc_test

import (
	"fmt"
	"time"

	"github.com/vesta-go/vesta/scripts/internal/rpcproc"
)

func ExampleStats_Percentiles() {
	var s rpcproc.Stats
	for i := 100; i >= 1; i-- { // 100 calls of 1 ms … 100 ms, in any order
		s.Lat = append(s.Lat, time.Duration(i)*time.Millisecond+123*time.Microsecond)
	}
	fmt.Println(s.Percentiles(time.Millisecond))
	fmt.Println(rpcproc.Stats{Errors: 3}.Percentiles(time.Millisecond))
	// Output:
	// 51ms 100ms 100ms
	// n/a n/a n/a
}
