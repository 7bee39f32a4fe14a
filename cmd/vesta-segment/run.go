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

	"github.com/vesta-go/vesta/service/config"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/stores"
)

// help is what --help says besides the flags.
var help = config.Help{
	Summary: "creates and lists the tags of segment mode in the store the vesta-go servers use.",
	Usage: []string{
		"vesta-segment [flags] create-tag TAG [--step N] [--initial N] [--description TEXT]",
		"vesta-segment [flags] list",
	},
	Docs: []string{"docs/segment.md"},
}

// groups are the configuration keys vesta-segment reads: which store and
// where (the SQLite file lives in the data dir). It starts no ID service,
// no server, creates no tags at start and logs nothing, so it lists none
// of their keys; a shared config file may still hold them.
var groups = []config.Group{config.GroupDataDir, config.GroupSegment}

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
}

// run is the whole program, minus os.Exit.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("vesta-segment", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse errors are returned; --help is the loader's
	fs.Usage = func() {}
	loader := config.Register(fs, config.Defaults{}, groups...)
	loader.Stderr = stderr
	loader.TakesArgs = true
	var cmd command
	fs.Int64Var(&cmd.step, "step", segment.DefaultTagStep, "create-tag: the tag's step (ids per range; about 600 x peak ids/s)")
	fs.Int64Var(&cmd.initial, "initial", segment.DefaultInitialMaxId, "create-tag: the tag's first id")
	fs.StringVar(&cmd.description, "description", "", "create-tag: a description, up to 256 characters")
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
	if err := cmd.parse(fs); err != nil {
		fmt.Fprintf(stderr, "vesta-segment: %v\n\nusage:\n  %s\n(see --help)\n", err, strings.Join(help.Usage, "\n  "))
		return exitUsage
	}
	cfg, err := loader.Load()
	if err != nil {
		fmt.Fprintf(stderr, "vesta-segment: %v\n", err)
		return exitUsage
	}
	if err := cmd.exec(ctx, cfg.Segment, stdout); err != nil {
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
	case "list":
		if len(args) != 1 {
			return errors.New("list takes no arguments")
		}
		for _, f := range []string{"step", "initial", "description"} {
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
	if c.name == "create-tag" {
		t := segment.TagInfo{Tag: c.tag, MaxId: c.initial, Step: c.step, Description: c.description}
		if err := st.CreateTag(ctx, t); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created tag %s: first id %d, step %d\n", t.Tag, t.MaxId, t.Step)
		return nil
	}
	tags, err := st.Tags(ctx)
	if err != nil {
		return err
	}
	return printTags(stdout, tags)
}

func printTags(w io.Writer, tags []segment.TagInfo) error {
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
