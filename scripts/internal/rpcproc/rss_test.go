package rpcproc

import (
	"errors"
	"testing"
)

func TestVmRSS(t *testing.T) {
	const status = "Name:\tserver-rpc\nVmPeak:\t  999 kB\nVmRSS:\t   2048 kB\nRssAnon:\t 1000 kB\n"
	if n, err := vmRSS(status); err != nil || n != 2048<<10 {
		t.Fatalf("vmRSS = %d, %v; want %d", n, err, 2048<<10)
	}
	if _, err := vmRSS("Name:\tx\nVmSize:\t 10 kB\n"); !errors.Is(err, errNoVmRSS) {
		t.Fatalf("vmRSS without the line: err %v, want errNoVmRSS", err)
	}
	if _, err := vmRSS("VmRSS:\t 12x kB\n"); err == nil {
		t.Fatal("vmRSS of a bad number: no error")
	}
}
