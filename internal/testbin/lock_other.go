//go:build !unix

package testbin

import "errors"

func lock(string) (func(), error) {
	return nil, errors.New("building test binaries needs file locks, which only unix systems have here")
}
