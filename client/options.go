package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/serverdefaults"
	"github.com/vesta-go/vesta/intf"
)

// Defaults of the options, stated in each option's comment
// (TestOptionCommentsStateDefaults).
const (
	defaultPoolSize    = 4
	defaultDialTimeout = time.Second
	// defaultCallTimeout bounds every call (and each health probe) unless
	// the caller's context ends sooner: nothing waits forever by default.
	defaultCallTimeout    = 2 * time.Second
	defaultBackoffMin     = 100 * time.Millisecond
	defaultBackoffMax     = 10 * time.Second
	defaultHealthInterval = 500 * time.Millisecond
	// defaultBufferRefill is the largest GenIds a buffer refill asks for
	// at once: the servers' default maxBatch.
	defaultBufferRefill = serverdefaults.MaxBatch
)

type options struct {
	poolSize       int
	dialTimeout    time.Duration
	callTimeout    time.Duration
	backoffMin     time.Duration
	backoffMax     time.Duration
	healthInterval time.Duration
	bufferSize     int
	bufferRefill   int
	segmentRanges  int64 // the largest local range; 0: off
	logger         *slog.Logger
	tls            *tls.Config                                              // nil: plain TCP
	token          string                                                   // "": none
	dialer         func(ctx context.Context, addr string) (net.Conn, error) // nil: TCP
}

func defaultOptions() options {
	return options{
		poolSize:       defaultPoolSize,
		dialTimeout:    defaultDialTimeout,
		callTimeout:    defaultCallTimeout,
		backoffMin:     defaultBackoffMin,
		backoffMax:     defaultBackoffMax,
		healthInterval: defaultHealthInterval,
		bufferRefill:   defaultBufferRefill,
		logger:         slog.Default(),
	}
}

// An Option configures New. A bad value makes New fail with an error that
// matches intf.ErrInvalidArgument.
type Option func(*options) error

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: vesta client: "+format, append([]any{intf.ErrInvalidArgument}, a...)...)
}

// WithPoolSize sets the number of connections per address, 1..256
// (default 4).
func WithPoolSize(n int) Option {
	return func(o *options) error {
		if n < 1 || n > 256 {
			return invalid("pool size %d: want 1..256", n)
		}
		o.poolSize = n
		return nil
	}
}

// WithDialTimeout bounds each connection attempt (default 1s).
func WithDialTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalid("dial timeout %s: want more than 0", d)
		}
		o.dialTimeout = d
		return nil
	}
}

// WithCallTimeout bounds every call: it ends at the caller's deadline or
// after d, whichever is sooner (default 2s); a caller
// whose context is context.Background gets d and at most a window more
// (10 ms, or d/64 when longer: its calls share one deadline per window,
// so that none arms a timer). 0 means
// no bound but the caller's context: then a call without a deadline may
// wait for as long as a hung server holds it.
func WithCallTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return invalid("call timeout %s: want 0 (none) or more", d)
		}
		o.callTimeout = d
		return nil
	}
}

// WithBackoff sets how long an address that failed is tried only when no
// other can serve: min after the first failure, times 1.6 with each
// further one in a row up to max, ±20% (defaults 100ms and 10s). A
// success resets it.
func WithBackoff(min, max time.Duration) Option {
	return func(o *options) error {
		if min <= 0 || max < min {
			return invalid("back-off %s..%s: want 0 < min <= max", min, max)
		}
		o.backoffMin, o.backoffMax = min, max
		return nil
	}
}

// WithHealthInterval sets how often down addresses whose back-off has
// passed are re-checked in the background (default 500ms).
func WithHealthInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalid("health interval %s: want more than 0", d)
		}
		o.healthInterval = d
		return nil
	}
}

// WithBuffer makes GenId serve IDs from a local stock of up to size IDs,
// fetched with GenIds and refilled in the background when below half;
// size 0 (the default) disables it. See the package documentation for the
// trade-off. Refills ask for at most refill IDs per call (0 means
// 10,000, the servers' default maxBatch); keep it within the servers' maxBatch.
func WithBuffer(size, refill int) Option {
	return func(o *options) error {
		if size < 0 || size > 10*intf.MaxBatch {
			return invalid("buffer size %d: want 0..%d", size, 10*intf.MaxBatch)
		}
		if refill < 0 || refill > intf.MaxBatch {
			return invalid("buffer refill %d: want 0..%d", refill, intf.MaxBatch)
		}
		o.bufferSize = size
		if refill > 0 {
			o.bufferRefill = refill
		}
		return nil
	}
}

// WithSegmentRanges makes NextSegmentId and NextIds (segment IDs) serve
// from ranges the client holds itself, taken whole from the servers
// (IdService.SegmentRange), instead of one round trip per call: a current
// and a spare range per tag, the spare loaded in the background at 10%
// use, the range size starting at the tag's step and doubling while ranges
// last under 15 minutes, up to max (0 means 10,000,000, the servers'
// default segmentMaxRange; a server with a lower cap is
// followed). An ID from a loaded range costs one atomic add.
//
// It is off by default, because of what it trades: the IDs a client still
// holds when it exits are never used (gaps of up to two ranges per tag per
// client), IDs of one tag are increasing per client rather than per
// server, and the servers must be new enough to serve SegmentRange.
func WithSegmentRanges(max int64) Option {
	return func(o *options) error {
		if max < 0 || max > intf.MaxRange {
			return invalid("segment ranges %d: want 0 (the servers' default, %d) up to %d", max, serverdefaults.SegmentMaxRange, intf.MaxRange)
		}
		if max == 0 {
			max = serverdefaults.SegmentMaxRange
		}
		o.segmentRanges = max
		return nil
	}
}

// WithLogger sets where fail-overs and recoveries are logged (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return invalid("nil logger")
		}
		o.logger = l
		return nil
	}
}

// WithTLS dials every server over TLS with cfg (cloned; its ServerName,
// when empty, is each address's host). Give it Certificates for a server
// with mutual TLS (tlsClientCA) and RootCAs for a server certificate of
// a private CA. A server whose certificate does not verify is marked
// down like one that cannot be reached: the error says why.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) error {
		if cfg == nil {
			return invalid("nil TLS config")
		}
		o.tls = cfg.Clone()
		return nil
	}
}

// WithDialer opens connections to each address given to New with dial
// instead of a TCP dial: through a
// proxy, over a Unix socket, or to an in-memory server in a test. dial must
// return once ctx is done (ctx carries the dial timeout), and a nil
// connection with an error; and with WithTLS the handshake runs
// over the connection it returns (ServerName, when empty, is the
// address's host, as for TCP).
func WithDialer(dial func(ctx context.Context, addr string) (net.Conn, error)) Option {
	return func(o *options) error {
		if dial == nil {
			return invalid("nil dialer")
		}
		o.dialer = dial
		return nil
	}
}

// WithToken sends token with every call, for servers with an auth file.
// A call the server refuses for it returns intf.ErrUnauthenticated or
// intf.ErrPermissionDenied (an *intf.ScopeError naming the scope), and
// is not tried on another server: they share the auth file. Over its
// quota a call waits the server's Retry-After and tries again while its
// context (and the call timeout) allows, else returns
// intf.ErrRateLimited. Use it with WithTLS: the token travels with every
// call. Read it from a file or the environment, never from a flag.
func WithToken(token string) Option {
	return func(o *options) error {
		if err := access.CheckToken(token); err != nil {
			return invalid("token: %v", err) // CheckToken never quotes the token
		}
		o.token = token
		return nil
	}
}
