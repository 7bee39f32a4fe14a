package segment_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// New runs a Generator on any Store (sqlitestore.Open or pgstore.Open in
// production; an in-memory one here); it owns the store from then on.
func ExampleNew() {
	ctx := context.Background()
	st := segtest.NewMem()
	if err := st.Init(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := st.CreateTag(ctx, segstore.TagInfo{Tag: "ticket", MaxId: 100, Step: 10}); err != nil {
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

// Sequence is a handle on one tag, got once: its Next takes the next ID
// without looking the tag up.
func ExampleGenerator_Sequence() {
	ctx := context.Background()
	st := segtest.NewMem()
	if err := st.CreateTag(ctx, segstore.TagInfo{Tag: "order", MaxId: 1, Step: 1000}); err != nil {
		fmt.Println(err)
		return
	}
	g, err := segment.New(ctx, segment.Settings{Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()

	orders, err := g.Sequence(ctx, "order")
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		id, err := orders.Next()
		fmt.Println(id, err)
	}
	// Output:
	// 1 <nil>
	// 2 <nil>
	// 3 <nil>
}
