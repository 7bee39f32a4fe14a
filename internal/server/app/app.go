// Package app is the composition root shared by every vesta-go main: flags,
// --version, configuration, logging, signal handling, and building what the
// configuration asks for — the ID service with its machine-id lease (etcd
// or PostgreSQL) and segment mode with its store. The lease keys, which
// internal/server/config reads into plain values without linking the lease
// libraries, become etcdlease's or pglease's Options here, validated by
// the library itself before anything starts; the segment keys become the
// store's configuration (internal/server/segconfig, checked likewise). The libraries (service,
// etcdlease, pglease, segment, the servers) take what they need and build
// nothing else; each main hands their pieces to its server.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/vesta-go/vesta/internal/buildinfo"
	"github.com/vesta-go/vesta/internal/gctarget"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/server/segconfig"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment"
)

// Program describes one main.
type Program struct {
	Name     string
	Defaults config.Defaults
	// Groups are the configuration keys the program reads, and so lists in
	// --help; nil means config.ServerGroups (every key).
	Groups []config.Group
	// Flags adds the program's own flags; may be nil.
	Flags func(fs *pflag.FlagSet)
	// Help is what --help says besides the flags.
	Help config.Help
	// Stdout and Stderr default to os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
}

// ErrExit means the program already did all it had to (--help, --version).
var ErrExit = errors.New("exit")

// Setup parses args (without the program name), loads the configuration
// and validates the lease options it gives with the lease library
// (checkLease) and the segment store's with the store library
// (segconfig.Stores), so that a wrong one is refused, naming its config
// key, before anything starts. It returns ErrExit after printing help (on
// stdout) or the version.
func (p Program) Setup(args []string) (config.Config, *pflag.FlagSet, error) {
	stdout, stderr := p.Stdout, p.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	fs := pflag.NewFlagSet(p.Name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse errors are returned; --help is the loader's
	fs.Usage = func() {}
	loader := config.Register(fs, p.Defaults, p.Groups...)
	loader.Stderr = stderr
	version := fs.Bool("version", false, "print the version and exit")
	if p.Flags != nil {
		p.Flags(fs)
	}
	if err := loader.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			if err := loader.WriteHelp(stdout, p.Name, p.Help); err != nil {
				return config.Config{}, fs, err
			}
			return config.Config{}, fs, ErrExit
		}
		return config.Config{}, fs, fmt.Errorf("%w (see --help)", err)
	}
	if fs.NArg() > 0 {
		return config.Config{}, fs, fmt.Errorf("unexpected arguments %q (see --help)", fs.Args())
	}
	if *version {
		fmt.Fprintf(stdout, "%s %s\n", p.Name, buildinfo.String())
		return config.Config{}, fs, ErrExit
	}
	cfg, err := loader.Load()
	if err == nil {
		err = checkLease(cfg)
	}
	if err == nil {
		_, err = segconfig.Stores(cfg)
	}
	if err == nil && cfg.Listen != "" {
		err = FitConns(&cfg)
	}
	return cfg, fs, err
}

// StartService starts the ID service of cfg — with the etcd lease of
// provider etcd, the PostgreSQL lease of provider postgres — and logs
// what it runs as.
func StartService(ctx context.Context, cfg config.Config) (*service.Service, error) {
	settings := cfg.Service
	lease, err := newLease(cfg)
	if err != nil {
		return nil, err
	}
	if lease != nil {
		settings.Lease = lease
	}
	svc, err := service.New(ctx, settings)
	if err != nil {
		return nil, err
	}
	s := svc.Settings()
	log := s.Logger
	if cfg.MachineProvider == config.ProviderProperty && s.Machine == 0 {
		log.Warn("vesta: machine id 0 is the default: give every node its own machine id (--machine, VESTA_MACHINE) or IDs will collide across nodes")
	}
	log.Info("vesta: id service ready", "machine", s.Machine, "provider", cfg.MachineProvider,
		"genMethod", s.GenMethod, "type", s.Type.String(), "version", s.Version,
		"populator", s.Populator, "dataDir", s.DataDir, "config", cfg.File, "build", buildinfo.String())
	return svc, nil
}

// OpenSegments opens segment mode as cfg configures it (segmentStore,
// segmentDSN, segmentTags) and logs it. With none of those keys set its
// SQLite file is opened only once it exists (stores.Config.OnDemand). It returns a nil Generator and no
// error when segment mode is off. An error that says the store cannot be
// reached now (network, timeout, a PostgreSQL that refuses connections
// for the moment) matches intf.ErrUnavailable: the servers retry those in
// the background; any other error (a wrong password, a SQLite file that
// cannot be created, a schema problem) is for the operator to fix.
func OpenSegments(ctx context.Context, cfg config.Config) (*segment.Generator, error) {
	sc, err := segconfig.Stores(cfg)
	if err != nil {
		return nil, fmt.Errorf("segment mode: %w", err)
	}
	log := cmp.Or(sc.Settings.Logger, slog.Default())
	g, err := stores.Open(ctx, sc)
	if errors.Is(err, stores.ErrDisabled) {
		log.Info("vesta: segment mode off (segmentStore off)")
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("segment mode: %w", err)
	}
	if tags := g.Tags(); sc.OnDemand && len(tags) == 0 {
		path, _ := sc.SQLitePath() // Open found it
		log.Info("vesta: segment mode on demand: no segment key is set and there are no tags yet; the SQLite file is opened once it exists (vesta-segment create-tag makes it), never created unasked",
			"file", path)
	} else {
		log.Info("vesta: segment mode on", "store", sc.Store, "tags", tags)
	}
	return g, nil
}

// SignalContext is cancelled on SIGINT or SIGTERM.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Main runs a program: set-up, then run with a context cancelled by
// SIGINT/SIGTERM. It returns the process exit code.
func Main(p Program, run func(ctx context.Context, cfg config.Config, fs *pflag.FlagSet) error) int {
	cfg, fs, err := p.Setup(os.Args[1:])
	if errors.Is(err, ErrExit) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", p.Name, err)
		return 2
	}
	gc := gctarget.Tune(nil)
	cfg.Service.Logger.Debug(p.Name+": garbage collector target", "GOGC", gc)
	ctx, stop := SignalContext()
	defer stop()
	if err := run(ctx, cfg, fs); err != nil {
		cfg.Service.Logger.Error(p.Name+" failed", "err", err)
		return 1
	}
	return 0
}
