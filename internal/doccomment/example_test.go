package doccomment_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vesta-go/vesta/internal/doccomment"
)

func ExampleFields() {
	dir, _ := os.MkdirTemp("", "doccomment")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "settings.go")
	_ = os.WriteFile(file, []byte(`package p

type Settings struct {
	// Step is the step of a range;
	// 0 means 1000.
	Step int64
}

// WithStep sets Step (default 1000).
func WithStep(n int64) {}
`), 0o644)
	fields, err := doccomment.Fields(file, "Settings")
	fmt.Printf("%q %v\n", fields["Step"], err)
	funcs, err := doccomment.Funcs(file)
	fmt.Printf("%q %v\n", funcs["WithStep"], err)
	_, err = doccomment.Fields(file, "Options")
	fmt.Println(err != nil)
	// Output:
	// "Step is the step of a range; 0 means 1000." <nil>
	// "WithStep sets Step (default 1000)." <nil>
	// true
}
