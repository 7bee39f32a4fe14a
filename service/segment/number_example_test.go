package segment_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/vesta-go/vesta/internal/segtest"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// A period tag numbers from 1 each day and writes its numbers with its
// format; the period comes from the database's clock (here an in-memory
// store's, set to a fixed time).
func ExampleGenerator_NextNumber() {
	ctx := context.Background()
	st := segtest.NewMem()
	st.SetNow(func() time.Time { return time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC) })
	err := st.CreatePeriodTag(ctx, segstore.PeriodTag{Tag: "order", Group: segstore.GroupDay, Format: "ORD{yyyyMMdd}{seq:6}", Step: 100})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := segment.New(ctx, segment.Settings{Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	for range 2 {
		n, err := g.NextNumber(ctx, "order")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(n.Text, n.Period, n.Seq)
	}
	// Output:
	// ORD20261127000001 20261127 1
	// ORD20261127000002 20261127 2
}

// ParseFormat checks a format against its tag's grouping; Render writes a
// number.
func ExampleParseFormat() {
	f, err := segstore.ParseFormat("INV-{yyyy}-{MM}-{seq:5}", segstore.GroupMonth)
	if err != nil {
		fmt.Println(err)
		return
	}
	text, _ := f.Render(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 42)
	fmt.Println(text)
	_, err = segstore.ParseFormat("INV-{yyyyMMdd}-{seq:5}", segstore.GroupMonth)
	fmt.Println(err)
	// Output:
	// INV-2026-11-00042
	// invalid argument: format "INV-{yyyyMMdd}-{seq:5}": {dd} is finer than the group month: a month's numbers would change day within the period
}
