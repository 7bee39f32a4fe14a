package rpcplugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/vesta-go/vesta/internal/rpcapi"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/server-rpc/internal/pluginwire"
)

// Config configures the plugin process Launch starts. The
// plugin reads the same configuration as every vesta-go main (flags,
// VESTA_* environment, a config file); the fields below become flags.
type Config struct {
	// Machine, when set, is passed as --machine.
	Machine *int64
	// DataDir, when set, is passed as --data-dir. Each plugin process
	// needs its own data dir (it is locked).
	DataDir string
	// NoDataDir passes --no-data-dir=true.
	NoDataDir bool
	// ConfigFile, when set, is passed as --config.
	ConfigFile string
	// Args are more flags, e.g. "--type=min-granularity".
	Args []string
	// Env is added to the host's environment for the plugin, e.g.
	// "VESTA_MAX_BATCH=1000".
	Env []string
	// LogOutput receives the plugin's logs, re-logged by the host; nil
	// means os.Stderr.
	LogOutput io.Writer
	// LogLevel of the plugin and of the host's go-plugin logger: debug,
	// info (default), warn or error.
	LogLevel string
}

// args are the plugin's command-line arguments.
func (c Config) args() []string {
	args := []string{"--plugin"}
	if c.Machine != nil {
		args = append(args, "--machine", strconv.FormatInt(*c.Machine, 10))
	}
	if c.DataDir != "" {
		args = append(args, "--data-dir", c.DataDir)
	}
	if c.NoDataDir {
		args = append(args, "--no-data-dir=true")
	}
	if c.ConfigFile != "" {
		args = append(args, "--config", c.ConfigFile)
	}
	if c.LogLevel != "" {
		args = append(args, "--log-level", c.LogLevel)
	}
	return append(args, c.Args...)
}

// Process is a running plugin process: an intf.IdService and an
// intf.SegmentService until Close.
type Process struct {
	conn   *rpcapi.Conn
	pc     *goplugin.Client
	cmd    *exec.Cmd // the process; go-plugin waits for it
	closed atomic.Bool
}

var (
	_ intf.IdService      = (*Process)(nil)
	_ intf.SegmentService = (*Process)(nil)
)

// Launch starts the server-rpc binary at path as a go-plugin plugin
// (net/rpc protocol) and returns its IdService. ctx bounds the start only:
// when it ends first, Launch returns at once and the process, if it
// got started, is stopped in the background. Close stops the process,
// which stores its high-water mark. The plugin
// uses genMethod 0 (embedded) unless configured otherwise.
func Launch(ctx context.Context, path string, cfg Config) (*Process, error) {
	out := cfg.LogOutput
	if out == nil {
		out = os.Stderr
	}
	cmd := exec.Command(path, cfg.args()...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	pc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  pluginwire.Handshake,
		Plugins:          pluginwire.PluginSet(nil),
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolNetRPC},
		// The host makes a one-off client certificate and the plugin a one-off
		// server certificate: only this host can talk to the plugin's socket.
		AutoMTLS:     true,
		StartTimeout: startTimeout(ctx),
		Logger: hclog.New(&hclog.LoggerOptions{
			Name: "vesta-plugin", Output: out, Level: hclog.LevelFromString(cfg.LogLevel),
		}),
	})
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("vesta plugin %s: %w", path, err)
	}
	type started struct {
		conn *rpcapi.Conn
		err  error
	}
	done := make(chan started) // unbuffered: a send succeeds only while Launch waits
	abandoned := make(chan struct{})
	go func() {
		conn, err := start(pc)
		select {
		case done <- started{conn, err}:
		case <-abandoned:
			// Launch returned on ctx: stop whatever started, now
			// that Start is over (go-plugin's Kill waits for it anyway).
			pc.Kill()
		}
	}()
	select {
	case s := <-done:
		if s.err != nil {
			pc.Kill()
			return nil, fmt.Errorf("vesta plugin %s: %w", path, s.err)
		}
		return &Process{conn: s.conn, pc: pc, cmd: cmd}, nil
	case <-ctx.Done():
		close(abandoned)
		return nil, fmt.Errorf("vesta plugin %s: %w", path, ctx.Err())
	}
}

func startTimeout(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), time.Millisecond)
	}
	return time.Minute
}

// start is dispense; a test counts its calls.
var start = dispense

// dispense starts the process and returns the plugin's Conn.
func dispense(pc *goplugin.Client) (*rpcapi.Conn, error) {
	proto, err := pc.Client()
	if err != nil {
		return nil, err
	}
	raw, err := proto.Dispense(pluginwire.PluginName)
	if err != nil {
		return nil, err
	}
	conn, ok := raw.(*rpcapi.Conn)
	if !ok {
		return nil, fmt.Errorf("plugin %q dispensed %T", pluginwire.PluginName, raw)
	}
	return conn, nil
}

// Close stops the plugin process: gracefully, so that it stores its
// exact high-water mark, or after 2 s by force. It returns an error when
// the process did not exit cleanly: the mark it stored ahead then stands,
// and a restart on the same data dir may wait it out. Calls after Close
// return intf.ErrClosed.
func (p *Process) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.pc.Kill() // returns once the process has been waited for
	if ps := p.cmd.ProcessState; ps == nil || !ps.Success() {
		return fmt.Errorf("vesta plugin: the process did not exit cleanly (%v): its exact high-water mark may not be stored", ps)
	}
	return nil
}

// Exited reports whether the plugin process has exited.
func (p *Process) Exited() bool { return p.pc.Exited() }

func (p *Process) service() (*rpcapi.Conn, error) {
	if p.closed.Load() {
		return nil, intf.ErrClosed
	}
	return p.conn, nil
}

// GenId issues one ID.
func (p *Process) GenId(ctx context.Context) (intf.Id, error) {
	s, err := p.service()
	if err != nil {
		return 0, err
	}
	return s.GenId(ctx)
}

// GenIds issues n IDs in increasing order.
func (p *Process) GenIds(ctx context.Context, n int) ([]intf.Id, error) {
	s, err := p.service()
	if err != nil {
		return nil, err
	}
	return s.GenIds(ctx, n)
}

// ExpId splits an ID into its fields.
func (p *Process) ExpId(ctx context.Context, id intf.Id) (intf.IdFields, error) {
	s, err := p.service()
	if err != nil {
		return intf.IdFields{}, err
	}
	return s.ExpId(ctx, id)
}

// MakeId packs fields into an ID.
func (p *Process) MakeId(ctx context.Context, req intf.MakeIdRequest) (intf.Id, error) {
	s, err := p.service()
	if err != nil {
		return 0, err
	}
	return s.MakeId(ctx, req)
}

// TransTime turns a time field into a time.
func (p *Process) TransTime(ctx context.Context, timeField int64, t intf.IdType) (time.Time, error) {
	s, err := p.service()
	if err != nil {
		return time.Time{}, err
	}
	return s.TransTime(ctx, timeField, t)
}

// NextNumber issues the next number of the period tag tag, formatted
// (intf.SegmentNumberer), from the plugin's own segment store.
func (p *Process) NextNumber(ctx context.Context, tag string) (intf.SegmentNumber, error) {
	s, err := p.service()
	if err != nil {
		return intf.SegmentNumber{}, err
	}
	return s.NextNumber(ctx, tag)
}

// NextIds issues n segment IDs of tag in increasing order, from the
// plugin's own segment store (by default segments.db in its data dir).
func (p *Process) NextIds(ctx context.Context, tag string, n int) ([]int64, error) {
	s, err := p.service()
	if err != nil {
		return nil, err
	}
	return s.NextIds(ctx, tag, n)
}
