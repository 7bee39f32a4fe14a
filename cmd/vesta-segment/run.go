package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/internal/buildinfo"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/segconfig"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment/segspec"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// help is what --help says besides the flags.
var help = config.Help{
	Summary: "creates and lists the tags of segment mode in the store the vesta-go servers use.",
	Usage: []string{
		"vesta-segment [flags] create-tag TAG [--step N] [--initial N] [--description TEXT]",
		"vesta-segment [flags] create-tag TAG --group day|month|year --format 'ORD{yyyyMMdd}{seq:6}' [--step N] [--description TEXT]",
		"vesta-segment [flags] list",
	},
	Docs: []string{"docs/segment.md"},
}

// groups are the configuration keys vesta-segment reads: which store and
// where (the SQLite file lives in the data dir). It starts no ID service,
// no server, creates no tags at start and logs nothing, so it lists none
// of their keys; a shared config file may still hold them.
var groups = []config.Group{config.GroupDataDir, config.GroupSegment}

// keys tailors the table's keys to vesta-segment: noDataDir is read from
// a shared file or environment (it turns segment mode off, and the command
// then says so) but takes no flag, which could only stop the command; the
// data dir holds only segments.db here, and the store is one it can
// manage (off has no tags).
var keys = config.Defaults{
	FileOnly: []string{config.KeyNoDataDir},
	Usage: map[string]string{
		config.KeyDataDir: "directory of segments.db, the SQLite store (default $XDG_STATE_HOME/vesta-go or ~/.local/state/vesta-go)",
		config.KeySegmentStore: "the store whose tags to manage: sqlite or postgres (default sqlite: the file segmentDSN names, " +
			"else <dataDir>/segments.db, made by the first create-tag)",
	},
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// command is what the arguments ask for.
type command struct {
	name, tag   string
	step        int64
	initial     int64
	description string
	// group and format make create-tag create a period tag.
	group, format string
	stepGiven     bool
}

// run is the whole program, minus os.Exit.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("vesta-segment", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse errors are returned; --help is the loader's
	fs.Usage = func() {}
	loader := config.Register(fs, keys, groups...)
	loader.Stderr = stderr
	loader.TakesArgs = true
	var cmd command
	fs.Int64Var(&cmd.step, "step", segspec.DefaultTagStep, "create-tag: the tag's step (ids per range; about 600 x peak ids/s)")
	fs.Int64Var(&cmd.initial, "initial", segspec.DefaultInitialMaxId, "create-tag: the tag's first id")
	fs.StringVar(&cmd.description, "description", "", "create-tag: a description, up to 256 characters")
	fs.StringVar(&cmd.group, "group", "", "create-tag: make a period tag whose numbers restart at 1 each day, month or year (with --format)")
	fs.StringVar(&cmd.format, "format", "", "create-tag --group: the numbers' format, e.g. 'ORD{yyyyMMdd}{seq:6}' (docs/segment.md)")
	version := fs.Bool("version", false, "print the version and exit")
	if err := loader.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			if err := loader.WriteHelp(stdout, "vesta-segment", help); err != nil {
				return exitError
			}
			return exitOK
		}
		fmt.Fprintf(stderr, "vesta-segment: %v (see --help)\n", err)
		return exitUsage
	}
	if *version {
		fmt.Fprintf(stdout, "vesta-segment %s\n", buildinfo.String())
		return exitOK
	}
	if err := cmd.parse(fs); err != nil {
		fmt.Fprintf(stderr, "vesta-segment: %v\n\nusage:\n  %s\n(see --help)\n", err, strings.Join(help.Usage, "\n  "))
		return exitUsage
	}
	cfg, err := loader.Load()
	var sc stores.Config
	if err == nil {
		sc, err = segconfig.Stores(cfg)
	}
	if err != nil {
		fmt.Fprintf(stderr, "vesta-segment: %v\n", err)
		return exitUsage
	}
	if err := cmd.exec(ctx, sc, stdout); err != nil {
		fmt.Fprintf(stderr, "vesta-segment: %v\n", err)
		return exitError
	}
	return exitOK
}

// parse reads the command and its tag from the positional arguments.
func (c *command) parse(fs *pflag.FlagSet) error {
	args := fs.Args()
	if len(args) == 0 {
		return errors.New("no command")
	}
	c.name = args[0]
	switch c.name {
	case "create-tag":
		if len(args) != 2 {
			return errors.New("create-tag takes one tag")
		}
		c.tag = args[1]
		c.stepGiven = fs.Changed("step")
		return c.checkPeriodFlags(fs)
	case "list":
		if len(args) != 1 {
			return errors.New("list takes no arguments")
		}
		for _, f := range []string{"step", "initial", "description", "group", "format"} {
			if fs.Changed(f) {
				return fmt.Errorf("--%s belongs to create-tag", f)
			}
		}
	default:
		return fmt.Errorf("unknown command %q", c.name)
	}
	return nil
}

func (c *command) exec(ctx context.Context, cfg stores.Config, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	st, err := stores.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if c.name == "create-tag" && c.group != "" {
		return c.createPeriodTag(ctx, st, stdout)
	}
	if c.name == "create-tag" {
		return c.createTag(ctx, st, stdout)
	}
	tags, err := st.Tags(ctx)
	if err != nil {
		return err
	}
	if err := printTags(stdout, tags); err != nil {
		return err
	}
	return printPeriodTags(ctx, st, stdout)
}

// createTag creates the tag, or accepts the row already there when it
// matches what the command asks, so that a deployment step (an init
// container) can run it every time: the same step and description, and a
// max_id at least --initial (max_id grows as ranges are handed out, so a
// tag in use still matches). A row that differs is an error naming each
// difference: the command never changes a row.
func (c *command) createTag(ctx context.Context, st segstore.Store, stdout io.Writer) error {
	t := segstore.TagInfo{Tag: c.tag, MaxId: c.initial, Step: c.step, Description: c.description}
	row, exists, err := ensureRow(st.CreateTag(ctx, t), func() ([]segstore.TagInfo, error) { return st.Tags(ctx) },
		func(r segstore.TagInfo) bool { return r.Tag == t.Tag },
		func(row segstore.TagInfo) (diffs []string) {
			if row.Step != t.Step {
				diffs = append(diffs, fmt.Sprintf("its step is %d, --step asks for %d", row.Step, t.Step))
			}
			if row.Description != t.Description {
				diffs = append(diffs, fmt.Sprintf("its description is %q, --description asks for %q", row.Description, t.Description))
			}
			if row.MaxId < t.MaxId {
				diffs = append(diffs, fmt.Sprintf("its max_id (the next id to hand out) is %d, below --initial %d", row.MaxId, t.MaxId))
			}
			return diffs
		})
	switch {
	case err != nil:
		return err
	case !exists:
		fmt.Fprintf(stdout, "created tag %s: first id %d, step %d\n", t.Tag, t.MaxId, t.Step)
		return nil
	}
	fmt.Fprintf(stdout, "tag %s exists and matches: next id %d, step %d\n", row.Tag, row.MaxId, row.Step)
	return nil
}

func printTags(w io.Writer, tags []segstore.TagInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TAG\tMAX_ID\tSTEP\tUPDATED (UTC)\tDESCRIPTION")
	for _, t := range tags {
		updated := "-"
		if !t.UpdateTime.IsZero() {
			updated = t.UpdateTime.UTC().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", t.Tag, t.MaxId, t.Step, updated, t.Description)
	}
	return tw.Flush()
}
