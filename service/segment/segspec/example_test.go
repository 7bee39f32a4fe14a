package segspec_test

import (
	"fmt"

	"github.com/vesta-go/vesta/service/segment/segspec"
)

func ExampleParseTags() {
	tags, err := segspec.ParseTags("order,invoice:1000:500")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tags {
		fmt.Printf("%s: first ID %d, step %d\n", t.Tag, t.MaxId, t.Step)
	}
	_, err = segspec.ParseTags("order:x")
	fmt.Println(err)
	// Output:
	// order: first ID 1, step 1000
	// invoice: first ID 1000, step 500
	// tag spec "order:x": invalid argument: "x" is not an integer
}
