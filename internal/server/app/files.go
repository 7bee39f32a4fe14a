package app

import (
	"fmt"
	"strconv"

	"github.com/vesta-go/vesta/internal/connlimit"
	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/serverdefaults"
)

// FitConns sets cfg's connection caps within the process's file
// descriptor limit (RLIMIT_NOFILE), keeping serverdefaults.ReservedFiles
// for the service's own files — the mark, the reloads, the lease's and the
// store's connections — so that a flood of connections costs its senders
// refusals and never the node's ability to issue. maxConns 0 is the
// default, lowered to fit; a maxConns set above what fits is refused,
// naming the key. It logs the figures.
func FitConns(cfg *config.Config) error {
	return fitConns(cfg, connlimit.FileLimit())
}

// fitConns is FitConns under a limit of limit files (0: unknown).
func fitConns(cfg *config.Config, limit int) error {
	admin := 0
	if cfg.AdminListen != "" {
		admin = serverdefaults.AdminMaxConns
	}
	fit := 1_000_000 // the limit unknown: what the key allows
	if limit > 0 {
		fit = limit - serverdefaults.ReservedFiles - admin
	}
	if fit < 1 {
		return fmt.Errorf("the process may open %d files (RLIMIT_NOFILE), fewer than the %d it keeps for its own files and the %d of the admin listener: raise the limit (ulimit -n)",
			limit, serverdefaults.ReservedFiles, admin)
	}
	switch {
	case cfg.MaxConns == 0:
		cfg.MaxConns = min(serverdefaults.MaxConns, fit)
	case cfg.MaxConns > fit:
		return cfg.KeyError(config.KeyMaxConns, strconv.Itoa(cfg.MaxConns), fmt.Sprintf(
			"at most %d: the process may open %d files (RLIMIT_NOFILE), %d kept for its own files and %d for the admin listener; raise the limit (ulimit -n) or lower maxConns",
			fit, limit, serverdefaults.ReservedFiles, admin))
	}
	cfg.Service.Logger.Info("vesta: file descriptors", "limit", limit, "reservedForTheService", serverdefaults.ReservedFiles,
		"maxConns", cfg.MaxConns, "adminMaxConns", admin)
	return nil
}
