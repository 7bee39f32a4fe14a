// Package grayfail runs the RPC client against real server-rpc processes
// under gray failure (a stopped process, restarts, kills) and measures
// what callers see. Its tests check the figures with generous bounds;
// scripts/bench-grayfail.sh prints them against the tight targets.
package grayfail

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// Build builds server-rpc into dir and returns the binary's path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "server-rpc")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/vesta-go/vesta/server-rpc")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build server-rpc: %w", err)
	}
	return bin, nil
}

// Proc is one server-rpc process on 127.0.0.1.
type Proc struct {
	Bin, DataDir, Addr string
	Machine            int
	// Listening is when the process said it listens.
	Listening time.Time
	cmd       *exec.Cmd
	exited    chan struct{}
}

var listening = regexp.MustCompile(`vesta: listening.* server=rpc addr=(\S+)`)

// Start starts a server with machine id machine on addr ("" for a free
// port) with its data in dataDir, and waits until it listens.
func Start(bin, dataDir, addr string, machine int) (*Proc, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	p := &Proc{Bin: bin, DataDir: dataDir, Machine: machine, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "--listen", addr, "--data-dir", dataDir, "--machine", fmt.Sprint(machine),
		"--shutdown-timeout", "1s")
	p.cmd.Env = append(os.Environ(), "VESTA_LOG_LEVEL=info")
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	select {
	case p.Addr = <-found:
		p.Listening = time.Now()
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("server-rpc exited before listening")
	case <-time.After(30 * time.Second):
		p.Kill()
		return nil, fmt.Errorf("server-rpc did not listen within 30s")
	}
}

// Restart starts the same server again on the same address and data dir.
func (p *Proc) Restart() (*Proc, error) { return Start(p.Bin, p.DataDir, p.Addr, p.Machine) }

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop ends the process with SIGTERM (graceful) and waits for it.
func (p *Proc) Stop() {
	_ = p.Signal(syscall.SIGCONT)
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.Kill()
	}
}

// Kill ends the process with SIGKILL and waits for it.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}
