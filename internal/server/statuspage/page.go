package statuspage

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/segment/segbuf"
)

// Paths the page is served at (Handler).
const (
	PathStatus = "/status"
	PathUI     = "/ui"
)

// Service is what the page reads of the ID service; *service.Service
// implements it.
type Service interface {
	Stats() service.Stats
	Settings() service.Settings
}

// Segments is what the page reads of segment mode; *segment.Generator
// implements it.
type Segments interface {
	Tags() []string
	Status(tag string) (segbuf.Status, error)
}

// Segment mode states of Options.Segments.
const (
	SegmentsOpen    = "open"
	SegmentsOff     = "off"
	SegmentsOpening = "opening"
)

// Options say what the page shows. The functions are called once per
// /status request and must be cheap and safe for concurrent use.
type Options struct {
	// Service returns the ID service, nil while it starts (required).
	Service func() Service
	// Segments returns segment mode and its state: a nil Segments with
	// SegmentsOff or SegmentsOpening. nil means segment mode is off.
	Segments func() (Segments, string)
	// Issued counts the IDs the server issued (required): /status turns
	// it into IDs per second.
	Issued func() uint64
	// State is the readiness, as /readyz says it ("ready", "starting",
	// "fenced", "stopping") and why when not ready (required).
	State func() (state, reason string)
	// Server names the door ("rest", "rpc"), Build the version running.
	Server, Build string
	// Type is the ID type, shown while the service starts.
	Type intf.IdType
	// MachineProvider and MachineSource say where the machine id comes
	// from: the provider (property, ips, hostname, etcd) and where its
	// key was set ("flag --machine").
	MachineProvider, MachineSource string
	// Now is the clock of the rate's samples and the document's time; nil
	// means time.Now.
	Now func() time.Time
	// Logger gets the write errors of /status; nil means slog.Default().
	Logger *slog.Logger
}

// ErrOption is returned by New for a required option left out.
var ErrOption = errors.New("statuspage: option")

// Page serves /status and /ui. Build it with New.
type Page struct {
	o       Options
	rate    rate
	bufs    sync.Pool                    // *bytes.Buffer of the JSON, reused
	layouts atomic.Pointer[layoutsCache] // of the last epoch seen
}

// layoutsCache is layoutsOf(epoch), made once: the epoch changes only when
// the service starts.
type layoutsCache struct {
	epoch   int64
	layouts []Layout
}

// layoutsAt returns the layouts of epoch.
func (p *Page) layoutsAt(epoch int64) []Layout {
	if c := p.layouts.Load(); c != nil && c.epoch == epoch {
		return c.layouts
	}
	c := &layoutsCache{epoch: epoch, layouts: layoutsOf(epoch)}
	p.layouts.Store(c)
	return c.layouts
}

// New validates o and returns the page.
func New(o Options) (*Page, error) {
	switch {
	case o.Service == nil:
		return nil, errors.Join(ErrOption, errors.New("statuspage: Options.Service is required"))
	case o.Issued == nil:
		return nil, errors.Join(ErrOption, errors.New("statuspage: Options.Issued is required"))
	case o.State == nil:
		return nil, errors.Join(ErrOption, errors.New("statuspage: Options.State is required"))
	case o.Type != intf.MaxPeak && o.Type != intf.MinGranularity:
		return nil, &intf.FieldError{Field: "statuspage Options.Type", Value: int64(o.Type), Min: 0, Max: 1}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Segments == nil {
		o.Segments = func() (Segments, string) { return nil, SegmentsOff }
	}
	return &Page{o: o, bufs: sync.Pool{New: func() any { return new(bytes.Buffer) }}}, nil
}

// Snapshot is the document /status serves now.
func (p *Page) Snapshot() Status {
	now := p.o.Now()
	st := Status{Now: now.UTC().Format(timeLayout), NowMillis: now.UnixMilli(), Build: p.o.Build, Server: p.o.Server,
		Machine: Machine{Provider: p.o.MachineProvider, Source: p.o.MachineSource}}
	st.State, st.StateReason = p.o.State()
	epoch, typ := intf.DefaultEpochMillis, p.o.Type
	var stats service.Stats
	svc := p.o.Service()
	if svc != nil {
		set := svc.Settings()
		stats = svc.Stats()
		epoch, typ = set.EpochMillis, set.Type
		machineOf(&st.Machine, set, stats)
		st.Settings = &Settings{GenMethod: set.GenMethod, Version: set.Version, Populator: set.Populator,
			MaxBorrowMillis: set.MaxBorrow.Milliseconds()}
		if !set.NoDataDir {
			st.Settings.DataDir = set.DataDir
		}
	}
	st.Layouts = p.layoutsAt(epoch)
	st.Layout = st.Layouts[typ]
	l, _ := typ.Layout()

	issued := p.o.Issued()
	perSec, window := p.rate.observe(now, issued)
	st.Ids = Ids{Issued: issued, PerSecond: perSec, WindowSeconds: window.Seconds(),
		BudgetUsed: perSec / float64(st.Layout.CapacityPerSecond), ExhaustionWaits: stats.ExhaustionWaits}

	st.Clock = Clock{HighWaterMillis: stats.HighWaterMillis, AheadMillis: stats.AheadMillis, ClockBackEvents: stats.ClockBackEvents}
	if stats.HighWaterMillis > 0 {
		st.Clock.HighWaterAheadMillis = stats.HighWaterMillis - now.UnixMilli()
	}
	elapsed := now.Sub(time.UnixMilli(epoch))
	st.Clock.LifetimeUsed = min(1, max(0, float64(elapsed)/float64(time.Duration(l.Time.Max()+1)*l.Unit)))

	st.Segments = p.segments()
	return st
}

// segments is the state of segment mode with every tag's buffers.
func (p *Page) segments() SegmentMode {
	seg, state := p.o.Segments()
	out := SegmentMode{State: state, Tags: []Tag{}}
	if seg == nil {
		return out
	}
	out.State = SegmentsOpen
	for _, tag := range seg.Tags() {
		ts, err := seg.Status(tag)
		if err != nil {
			continue // removed since Tags
		}
		out.Tags = append(out.Tags, tagOf(tag, ts))
	}
	return out
}

// StatusHandler serves GET /status: Snapshot as JSON, never cached.
// It checks no token: the door does (scope metrics).
func (p *Page) StatusHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowGet(w, r) {
			return
		}
		buf := p.bufs.Get().(*bytes.Buffer)
		defer func() {
			if buf.Cap() <= 64<<10 { // a huge tag list is not kept
				buf.Reset()
				p.bufs.Put(buf)
			}
		}()
		if err := json.NewEncoder(buf).Encode(p.Snapshot()); err != nil { // ends in a newline
			p.o.Logger.Error("statuspage: encoding /status", "err", err)
			http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		if _, err := w.Write(buf.Bytes()); err != nil {
			p.o.Logger.Debug("statuspage: writing /status", "err", err)
		}
	})
}

// UIHandler serves GET /ui: the HTML page, which reads /status (relative
// to its own URL) once a second.
func (p *Page) UIHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowGet(w, r) {
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Security-Policy", uiCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(uiHTML)
	})
}

// Handler serves both at PathStatus and PathUI, for a listener of its
// own (an admin port); wrap it in the door's authentication.
func (p *Page) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(PathStatus, p.StatusHandler())
	mux.Handle(PathUI, p.UIHandler())
	return mux
}

// allowGet answers 405 to anything but GET and HEAD.
func allowGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusMethodNotAllowed)
	_, _ = w.Write([]byte(`{"error":"method not allowed: ` + r.Method + `; use GET"}` + "\n"))
	return false
}
