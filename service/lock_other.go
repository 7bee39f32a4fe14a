//go:build !unix

package service

import (
	"errors"
	"os"
)

func lockFile(*os.File) error {
	return errors.New("data dir locking is only supported on unix systems; set noDataDir to run without it")
}

func unlockFile(*os.File) {}

func dirIdentity(*os.File) string { return "" }
