package stores

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// onDemandStore is the SQLite store of a configuration that did not ask
// for segment mode (Config.OnDemand): it opens the file only once the
// file exists, and until then has no tags. So a server that never serves
// segment IDs creates no file, and one whose tags are created later
// (vesta-segment create-tag) serves them at their first request, as the
// Generator rereads the tag list on a miss. Only CreateTag, an explicit
// request for a tag, creates the file.
type onDemandStore struct {
	path string
	st   atomic.Pointer[sqlitestore.Store] // nil until the file is opened

	mu     sync.Mutex // serialises opening against Close
	closed bool
}

var _ segstore.Store = (*onDemandStore)(nil)

// store returns the opened store, opening it when the file exists (or, with
// create, in any case); nil and no error while there is no file.
func (s *onDemandStore) store(ctx context.Context, create bool) (*sqlitestore.Store, error) {
	if st := s.st.Load(); st != nil {
		return st, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.st.Load(); st != nil {
		return st, nil
	}
	if s.closed {
		return nil, intf.ErrClosed
	}
	if !create {
		_, err := os.Stat(s.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("segment store sqlite: %w", err)
		}
	}
	st, err := sqlitestore.Open(ctx, s.path)
	if err != nil {
		return nil, err
	}
	if err := st.Init(ctx); err != nil {
		_ = st.Close()
		return nil, err
	}
	s.st.Store(st)
	return st, nil
}

// Init opens the file when it exists, and creates the table in it.
func (s *onDemandStore) Init(ctx context.Context) error {
	_, err := s.store(ctx, false)
	return err
}

// Tags lists the file's tags; none while there is no file.
func (s *onDemandStore) Tags(ctx context.Context) ([]segstore.TagInfo, error) {
	st, err := s.store(ctx, false)
	if st == nil {
		return nil, err
	}
	return st.Tags(ctx)
}

// Alloc allocates in the file; while there is none, no tag exists.
func (s *onDemandStore) Alloc(ctx context.Context, tag string, step int64) (maxId, dbStep int64, err error) {
	st, err := s.store(ctx, false)
	if err != nil {
		return 0, 0, err
	}
	if st == nil {
		return 0, 0, segstore.AllocMiss(tag, false)
	}
	return st.Alloc(ctx, tag, step)
}

// CreateTag creates the file if needed, then the tag.
func (s *onDemandStore) CreateTag(ctx context.Context, t segstore.TagInfo) error {
	if err := t.Validate(); err != nil { // a bad tag creates no file
		return err
	}
	st, err := s.store(ctx, true)
	if err != nil {
		return err
	}
	return st.CreateTag(ctx, t)
}

// Close closes the file if it was opened; later calls open nothing.
func (s *onDemandStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if st := s.st.Load(); st != nil {
		return st.Close()
	}
	return nil
}
