package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// Open a file (created with its directory), Init the leaf_alloc table,
// add tags and allocate ranges. Each Alloc hands the caller the range
// [maxId-step, maxId); a segment.Generator (segment.New) does this for
// you, ahead of need.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "vesta-sqlitestore-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(dir, sqlitestore.FileName))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	if err := st.Init(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range []segstore.TagInfo{
		{Tag: "order", MaxId: 1, Step: 1000, Description: "order numbers"},
		{Tag: "invoice", MaxId: 5000, Step: 100},
	} {
		if err := st.CreateTag(ctx, t); err != nil {
			fmt.Println(err)
			return
		}
	}
	err = st.CreateTag(ctx, segstore.TagInfo{Tag: "order", MaxId: 1, Step: 10})
	fmt.Println(errors.Is(err, segstore.ErrTagExists), err)

	tags, err := st.Tags(ctx) // ordered by tag
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tags {
		fmt.Printf("%s: next %d, step %d\n", t.Tag, t.MaxId, t.Step)
	}

	maxId, step, err := st.Alloc(ctx, "order", 0) // 0: the row's own step
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("order: [%d, %d)\n", maxId-step, maxId)
	maxId, _, err = st.Alloc(ctx, "order", 2000) // a larger step, as a busy generator asks
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("order: [%d, %d)\n", maxId-2000, maxId)

	_, _, err = st.Alloc(ctx, "coupon", 0)
	fmt.Println(err)
	// Output:
	// true segment tag "order": segment tag already exists
	// invoice: next 5000, step 100
	// order: next 1, step 1000
	// order: [1, 1001)
	// order: [1001, 3001)
	// segment tag "coupon": unknown segment tag
}
