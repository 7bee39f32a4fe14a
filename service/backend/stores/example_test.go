package stores_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

// Open builds the store and the Generator from the configuration, as the
// servers do: here an SQLite file in a data directory, with two tags
// created at start.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "vesta-segment-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	tags, err := segspec.ParseTags("order,invoice:1000:500")
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := stores.Open(ctx, stores.Config{
		Store:    segspec.SQLite,
		DataDir:  dir,
		Tags:     tags,
		Settings: segment.Settings{Logger: slog.New(slog.DiscardHandler)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()

	order, _ := g.NextId(ctx, "order")
	invoices, _ := g.NextIds(ctx, "invoice", 3)
	_, err = g.NextId(ctx, "coupon")
	fmt.Println(g.Tags())
	fmt.Println(order, invoices)
	fmt.Println(err)
	// Output:
	// [invoice order]
	// 1 [1000 1001 1002]
	// segment tag "coupon": unknown segment tag
}
