package config

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Help is what a program's --help says besides its flags.
type Help struct {
	// Summary says in one line what the program does.
	Summary string
	// Usage are its command lines; none means "<name> [flags]".
	Usage []string
	// Docs are its own documents besides docs/configuration.md, e.g.
	// docs/rest.md.
	Docs []string
}

// groupTitles head the groups' flags in --help; a group not listed is
// headed by its name.
var groupTitles = map[Group]string{
	GroupFile:        "Config file",
	GroupService:     "ID service",
	GroupDataDir:     "Data dir",
	GroupServer:      "Server",
	GroupLog:         "Logging",
	GroupEtcd:        "etcd and postgres machine-id providers (--machine-provider etcd, postgres)",
	GroupSegment:     "Segment store",
	GroupSegmentTags: "Segment tags",
	GroupAdmin:       "Admin listener (server-rpc)",
	GroupRPC:         "RPC server (server-rpc)",
}

// helpWidth is the width --help wraps its text to.
const helpWidth = 100

// maxHelpCol is the widest the flags' column gets: where the texts begin.
const maxHelpCol = 40

// nbsp joins words that wrap keeps on one line.
const nbsp = "\x00"

// WriteHelp writes the --help of the program called name: the summary and
// usage, the flags of the registered keys by group — each with its type,
// its default in this program and its variable and file key — then the
// program's other flags, and how the settings are given: environment
// variables, the file, precedence, where the documentation is.
func (l *Loader) WriteHelp(w io.Writer, name string, h Help) error {
	bw := bufio.NewWriter(w)
	if h.Summary != "" {
		fmt.Fprintf(bw, "%s: %s\n\n", name, h.Summary)
	}
	usage := h.Usage
	if len(usage) == 0 {
		usage = []string{name + " [flags]"}
	}
	fmt.Fprintln(bw, "Usage:")
	for _, u := range usage {
		fmt.Fprintln(bw, "  "+u)
	}

	// The registered keys by group, in documentation order, then the
	// program's other flags.
	var sections []helpSection
	at := map[Group]int{}
	for _, k := range l.flagKeys() {
		i, seen := at[k.Group]
		if !seen {
			title := groupTitles[k.Group]
			if title == "" {
				title = string(k.Group)
			}
			i, at[k.Group] = len(sections), len(sections)
			sections = append(sections, helpSection{title: title})
		}
		sections[i].entries = append(sections[i].entries, l.keyEntry(k))
	}
	other := helpSection{title: "Other flags"}
	l.fs.VisitAll(func(f *pflag.Flag) {
		if !l.isKeyFlag(f.Name) {
			other.entries = append(other.entries, flagEntry(f))
		}
	})
	sections = append(sections, other)
	col := 0
	for _, s := range sections {
		for _, e := range s.entries {
			col = max(col, len(e.left)+2)
		}
	}
	col = min(col, maxHelpCol)
	for _, s := range sections {
		s.write(bw, col)
	}

	docs := strings.Join(append([]string{"docs/configuration.md (every setting)"}, h.Docs...), ", ")
	fmt.Fprintln(bw)
	for _, p := range []string{
		"A flag with brackets is a setting: they name its environment variable and its key in the config " +
			"file (--config: YAML, TOML, JSON or Vesta's .properties). Precedence, " +
			"highest first: the flag, the environment variable, the file's key, " + l.vestaHint() +
			"the default." + l.boolHint() + " A VESTA_* variable or a file key " +
			"that is no setting is refused, and so is a bad value, with an error that says where it was set.",
		"Documentation: " + docs + " in the source, github.com/vesta-go/vesta.",
	} {
		for _, line := range wrap(p, helpWidth) {
			fmt.Fprintln(bw, line)
		}
	}
	return bw.Flush()
}

// vestaHint names, in the precedence, Vesta's property names in the file
// with the first registered key that has one as the example; "" when
// none has one (vesta-segment).
func (l *Loader) vestaHint() string {
	for _, k := range l.keys() {
		if k.Vesta != "" {
			return "Vesta's property name in the file (" + k.Vesta + ", ...), "
		}
	}
	return ""
}

// boolHint says how a boolean key's flag is given, with the first one
// registered as the example; "" when there is none.
func (l *Loader) boolHint() string {
	for _, k := range l.flagKeys() {
		if f := l.fs.Lookup(k.Flag); f.Value.Type() == typeBool {
			return fmt.Sprintf(" A boolean flag alone means true (--%s); --%s=false turns it off.", f.Name, f.Name)
		}
	}
	return ""
}

// helpEntry is one flag in --help: "--name type" and its description.
type helpEntry struct{ left, text string }

// keyEntry describes a key's flag: usage, default, variable, file key.
func (l *Loader) keyEntry(k Key) helpEntry {
	f := l.fs.Lookup(k.Flag)
	e := flagEntry(f)
	e.text = f.Usage
	if def := l.defaultOf(k); def != "" && !(f.Value.Type() == typeBool && def == boolean(false)) {
		e.text += " (default " + def + ")"
	}
	where := k.Env
	if k.Name != KeyConfig {
		where += ", key " + k.Name
	}

	where = strings.ReplaceAll(where, " ", nbsp)
	if len(where)+2 > helpWidth-maxHelpCol {
		// Too long for one line of the narrowest text column: it may
		// break after the comma.
		where = strings.Replace(where, ","+nbsp, ", ", 1)
	}
	if a := k.Alias; a.Name != "" {
		e.text += " (also --" + a.Flag + ", " + a.Env + ", key " + a.Name + ")"
	}
	e.text += " [" + where + "]"
	return e
}

// flagEntry describes a flag with pflag's type name and its default
// unless that is the type's zero value.
func flagEntry(f *pflag.Flag) helpEntry {
	varname, usage := pflag.UnquoteUsage(f)
	e := helpEntry{left: "  --" + f.Name, text: usage}
	if varname != "" {
		e.left += " " + varname
	}
	switch f.DefValue {
	case "", "0", "0s", "false", "[]", "<nil>":
	default:
		e.text += " (default " + f.DefValue + ")"
	}
	return e
}

// helpSection is a titled list of flags.
type helpSection struct {
	title   string
	entries []helpEntry
}

// write writes the section, the descriptions wrapped at helpWidth from
// column col.
func (s helpSection) write(w io.Writer, col int) {
	if len(s.entries) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", s.title)
	pad := strings.Repeat(" ", col)
	for _, e := range s.entries {
		first := e.left + strings.Repeat(" ", max(col-len(e.left), 0))
		if len(e.left)+2 > col { // too long a name: the text starts below
			fmt.Fprintln(w, e.left)
			first = pad
		}
		for i, line := range wrap(e.text, helpWidth-col) {
			if i > 0 {
				first = pad
			}
			fmt.Fprintln(w, first+strings.ReplaceAll(line, nbsp, " "))
		}
	}
}

// wrap splits text into lines of at most width bytes at spaces (a longer
// word has a line of its own).
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
