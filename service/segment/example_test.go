package segment_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/sqlitestore"
)

// New runs a Generator on any Store; it owns the store from then on.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "vesta-segment-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "ids.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := st.Init(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := st.CreateTag(ctx, segment.TagInfo{Tag: "ticket", MaxId: 100, Step: 10}); err != nil {
		fmt.Println(err)
		return
	}
	g, err := segment.New(ctx, segment.Settings{Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		_ = st.Close()
		return
	}
	defer g.Close()

	ids, _ := g.NextIds(ctx, "ticket", 15) // crosses from the first range of 10 into the next
	fmt.Println(ids)
	// Output:
	// [100 101 102 103 104 105 106 107 108 109 110 111 112 113 114]
}

func ExampleParseTags() {
	tags, err := segment.ParseTags("order,invoice:1000:500")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tags {
		fmt.Printf("%s: first ID %d, step %d\n", t.Tag, t.MaxId, t.Step)
	}
	_, err = segment.ParseTags("order:x")
	fmt.Println(err)
	// Output:
	// order: first ID 1, step 1000
	// invoice: first ID 1000, step 500
	// tag spec "order:x": invalid argument: "x" is not an integer
}
