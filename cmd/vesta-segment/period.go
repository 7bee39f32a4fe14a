package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/service/segment/segstore"
)

// checkPeriodFlags checks the flags of create-tag against each other:
// --group and --format go together, and a period tag starts at 1 each
// period, so it takes no --initial.
func (c *command) checkPeriodFlags(fs *pflag.FlagSet) error {
	switch {
	case c.group == "" && c.format == "":
		return nil
	case c.group == "":
		return errors.New("--format belongs to a period tag: give --group day|month|year too")
	case c.format == "":
		return errors.New("--group makes a period tag: give its --format too, e.g. --format 'ORD{yyyyMMdd}{seq:6}'")
	case fs.Changed("initial"):
		return errors.New("--initial does not apply to a period tag: its numbers start at 1 each period")
	}
	if _, err := segstore.ParseGrouping(c.group); err != nil {
		return fmt.Errorf("--group: %w", err)
	}
	if _, err := segstore.ParseFormat(c.format, segstore.Grouping(c.group)); err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if !c.stepGiven {
		c.step = segstore.DefaultPeriodStep
	}
	return nil
}

// createPeriodTag creates the period tag, or accepts the row already there
// when it matches (as createTag does).
func (c *command) createPeriodTag(ctx context.Context, st segstore.Store, stdout io.Writer) error {
	ps, err := segstore.PeriodStoreOf(st)
	if err != nil {
		return err
	}
	t := segstore.PeriodTag{Tag: c.tag, Group: segstore.Grouping(c.group), Format: c.format, Step: c.step, Description: c.description}
	row, exists, err := ensureRow(ps.CreatePeriodTag(ctx, t), func() ([]segstore.PeriodTag, error) { return ps.PeriodTags(ctx) },
		func(r segstore.PeriodTag) bool { return r.Tag == t.Tag },
		func(row segstore.PeriodTag) (diffs []string) {
			for _, d := range []struct{ name, row, asked string }{
				{"group", string(row.Group), string(t.Group)},
				{"format", row.Format, t.Format},
				{"step", fmt.Sprint(row.Step), fmt.Sprint(t.Step)},
				{"description", row.Description, t.Description},
			} {
				if d.row != d.asked {
					diffs = append(diffs, fmt.Sprintf("its %s is %q, --%s asks for %q", d.name, d.row, d.name, d.asked))
				}
			}
			return diffs
		})
	switch {
	case err != nil:
		return err
	case !exists:
		fmt.Fprintf(stdout, "created period tag %s: numbers from 1 each %s, as %s, step %d\n", t.Tag, t.Group, t.Format, t.Step)
		return nil
	}
	fmt.Fprintf(stdout, "period tag %s exists and matches: each %s, as %s, step %d\n", row.Tag, row.Group, row.Format, row.Step)
	return nil
}

// printPeriodTags lists the period tags after the others, when there are.
func printPeriodTags(ctx context.Context, st segstore.Store, w io.Writer) error {
	ps, err := segstore.PeriodStoreOf(st)
	if err != nil {
		return nil // a store without period tags has none to list
	}
	tags, err := ps.PeriodTags(ctx)
	if err != nil || len(tags) == 0 {
		return err
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PERIOD TAG\tGROUP\tFORMAT\tSTEP\tDESCRIPTION")
	for _, t := range tags {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", t.Tag, t.Group, t.Format, t.Step, t.Description)
	}
	return tw.Flush()
}
