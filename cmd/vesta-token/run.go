package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/internal/access"
)

// newUsage and hashUsage are the command lines of the subcommands.
const (
	newUsage  = "vesta-token new [--name NAME] [--scopes genid,decode,segment:TAG,segment:*,metrics] [--rate IDS_PER_S] [--burst IDS] [--out FILE] [--auth-file FILE]"
	hashUsage = "vesta-token hash   < token file (the token on its first line)"
)

const usage = "usage:\n  " + newUsage + "\n  " + hashUsage + "\n"

// run is the command; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "new":
		err = newToken(args[1:], stdout, stderr)
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
	case "hash":
		err = hashToken(args[1:], stdin, stdout)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "vesta-token: %v\n%s", err, usage)
		return 2
	}
	return 0
}

func newToken(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("vesta-token new", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // a parse error is returned, --help printed below
	fs.Usage = func() {}
	name := fs.String("name", "", "the client's name in the auth file (prints a whole entry)")
	scopes := fs.String("scopes", "", "comma-separated scopes of the entry")
	rate := fs.Float64("rate", 0, "IDs per second of the entry (0: no limit)")
	burst := fs.Int64("burst", 0, "IDs above the rate at once (0: one second's worth)")
	out := fs.String("out", "", "write the token to this new file (mode 0600) instead of printing it")
	authFile := fs.String("auth-file", "", "add the entry (--name needed) to this auth file instead of printing it: a new file (mode 0600) with its clients: header, or appended to an existing one")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "vesta-token new: makes a client token: prints it (or writes it to --out) with the\n"+
				"SHA-256 the auth file holds, and the client's whole entry when --name is given\n"+
				"(with --auth-file, written into that file: created, or appended to).\n\nUsage:\n  %s\n\nFlags:\n%s",
				newUsage, fs.FlagUsages())
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *authFile != "" && *name == "" {
		return errors.New("--auth-file: give the client's --name too")
	}
	token, err := access.NewToken()
	if err != nil {
		return err
	}
	sum := access.HashToken(token)
	client := access.Client{Name: *name, Tokens: [][32]byte{sum}, Rate: *rate, Burst: *burst}
	if client.Name == "" {
		client.Name = "client" // checked below like the real entry, printed only when named
	}
	for s := range strings.SplitSeq(*scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			client.Scopes = append(client.Scopes, access.Scope(s))
		}
	}
	if _, err := access.NewPolicy([]access.Client{client}); err != nil {
		var ce *access.ClientError
		if errors.As(err, &ce) {
			return fmt.Errorf("--%s: %s", flagOf(ce.Field), ce.Msg)
		}
		return err
	}
	var edit *authFileEdit
	if *authFile != "" {
		if edit, err = planAuthFile(*authFile, entryLines(client, access.HashTokenHex(token))); err != nil {
			return fmt.Errorf("--auth-file: %w", err)
		}
	}
	// The auth file is written before the token is handed out, so that a
	// failed write leaves no token that no auth file holds; --out is
	// created first, so that one that exists fails before either.
	var f *os.File
	if *out != "" {
		if f, err = os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if edit != nil {
		if err := edit.write(); err != nil {
			if f != nil {
				f.Close()
				os.Remove(*out)
			}
			return fmt.Errorf("--auth-file: %w", err)
		}
	}
	if f != nil {
		if _, err := fmt.Fprintln(f, token); err != nil {
			f.Close()
			return fmt.Errorf("--out: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		fmt.Fprintf(stderr, "vesta-token: token written to %s (mode 0600); its only copy: the server keeps only its SHA-256\n", *out)
	} else {
		fmt.Fprintf(stdout, "token: %s\n", token)
	}
	switch {
	case edit != nil:
		done := "added to"
		if edit.create {
			done = "written to a new"
		}
		fmt.Fprintf(stderr, "vesta-token: client %s %s auth file %s\n", client.Name, done, *authFile)
	case *name == "":
		fmt.Fprintf(stdout, "tokenSHA256: %q\n", access.HashTokenHex(token))
	default:
		fmt.Fprint(stdout, "# auth file entry (under clients:):\n"+entryLines(client, access.HashTokenHex(token)))
	}
	return nil
}

// flagOf names the flag of a field of access.Client.
func flagOf(field string) string {
	switch field {
	case "name", "scopes", "rate", "burst":
		return field
	}
	return "name"
}

// entryLines is the client's entry of the auth file, the lines of an
// item of its clients list.
func entryLines(c access.Client, hexSum string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - name: %s\n    tokenSHA256: %q\n", c.Name, hexSum)
	if len(c.Scopes) > 0 {
		quoted := make([]string, len(c.Scopes))
		for i, s := range c.Scopes {
			quoted[i] = fmt.Sprintf("%q", string(s))
		}
		fmt.Fprintf(&b, "    scopes: [%s]\n", strings.Join(quoted, ", "))
	}
	if c.Rate > 0 {
		fmt.Fprintf(&b, "    rate: %g\n", c.Rate)
	}
	if c.Burst > 0 {
		fmt.Fprintf(&b, "    burst: %d\n", c.Burst)
	}
	return b.String()
}

func hashToken(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) > 0 {
		return errors.New("hash reads the token from stdin, never from arguments (they show in ps and shell history)")
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, access.MaxHeaderBytes+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	token := strings.TrimRight(line, "\r\n")
	if err := access.CheckToken(token); err != nil {
		return fmt.Errorf("stdin: %w", err) // never quotes the token
	}
	fmt.Fprintf(stdout, "tokenSHA256: %q\n", access.HashTokenHex(token))
	return nil
}
