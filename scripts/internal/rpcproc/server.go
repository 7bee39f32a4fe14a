package rpcproc

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"time"
)

// Server is a server-rpc process started by Start.
type Server struct {
	Cmd    *exec.Cmd
	Addr   string // where it listens, from its log
	totals chan string
}

var (
	listening = regexp.MustCompile(`vesta: listening.* server=rpc addr=(\S+)`)
	totals    = regexp.MustCompile(`connection totals"? (.*)`)
)

// Start starts bin on a free 127.0.0.1 port with a temporary data dir
// (removed when the process ends) as machine 1, then args, and returns
// once the server has logged where it listens.
func Start(bin string, args []string) (*Server, error) {
	dir, err := os.MkdirTemp("", "rpcproc")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"--listen", "127.0.0.1:0", "--data-dir", dir, "--machine", "1"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Cmd: cmd, totals: make(chan string, 1)}
	addr := make(chan string, 1)
	go func() {
		defer os.RemoveAll(dir)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
			if m := totals.FindStringSubmatch(sc.Text()); m != nil {
				s.totals <- m[1]
			}
		}
		close(s.totals)
	}()
	select {
	case s.Addr = <-addr:
		return s, nil
	case <-time.After(30 * time.Second):
		s.Kill()
		return nil, errors.New("the server did not say where it listens")
	}
}

// Pid is the server process's id.
func (s *Server) Pid() int { return s.Cmd.Process.Pid }

// Stop sends SIGTERM and returns the server's connection totals (the
// key=value fields of its last log line about them).
func (s *Server) Stop() string {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	t := <-s.totals
	_ = s.Cmd.Wait()
	return t
}

// Kill kills the server unless it has already been waited for; deferred
// after Start, it ends a server an error left running.
func (s *Server) Kill() {
	if s.Cmd.ProcessState == nil {
		_ = s.Cmd.Process.Kill()
		_ = s.Cmd.Wait()
	}
}
