package restserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
)

// segmentIds are the segment IDs of one tag.
type segmentIds struct {
	seg Segments
	tag string
}

func (t segmentIds) one(ctx context.Context) (int64, error) { return t.seg.NextId(ctx, t.tag) }
func (t segmentIds) batch(ctx context.Context, n int) ([]int64, error) {
	return t.seg.NextIds(ctx, t.tag, n)
}

// issued counts nothing: segment mode counts its IDs by tag itself
// (segbuf.Status.Issued, vesta_segment_ids_issued_total).
func (segmentIds) issued(int) {}

// nextSegment serves /segment/{tag}: one segment ID of the tag, or with
// ?count=N a batch of N, in the formats of /genid.
func (s *Server) nextSegment(c echo.Context) error {
	if strings.Contains(c.Param("tag"), "/") {
		// Echo lets the last path parameter take the rest of the path:
		// /segment/order/ and /segment/order/x are no endpoint (an
		// escaped %2F stays in the tag, and CheckTag refuses it).
		return echo.ErrNotFound
	}
	tag, err := pathParam(c, "tag")
	if err != nil {
		return err
	}
	if err := intf.CheckTag(tag); err != nil {
		return err
	}
	if err := s.authorize(c, access.SegmentScope(tag)); err != nil {
		return err
	}
	n, err := s.batchSize(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	seg, err := s.segments()
	if err != nil {
		return err
	}
	return serveIds(s, c, segmentIds{seg, tag}, n, nil) // plain counters: decimal only
}

// pathParam returns a path parameter unescaped exactly once. Echo routes
// on the raw path when the URL has one (it holds an escape that is not the
// canonical one, e.g. %65 for 'e') and then leaves the value escaped;
// otherwise the value is already unescaped.
func pathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", badParam(name, "%s: malformed escape", quoteShort(v))
	}
	return u, nil
}

// segmentTag is one tag in the answer of GET /segment.
type segmentTag struct {
	Tag string `json:"tag"`
	// Current and Spare are the IDs left in the current range and in the
	// one loaded ahead.
	Current int64 `json:"current"`
	Spare   int64 `json:"spare"`
	// Step is the size of the last range loaded (0 before the first);
	// DBStep the tag's step in the database.
	Step    int64 `json:"step"`
	DBStep  int64 `json:"dbStep"`
	Loading bool  `json:"loading"`
	// LastLoad is when the last range arrived; absent before the first.
	LastLoad string `json:"lastLoad,omitempty"`
	// LoadFailing reports that the last load failed (the details are
	// logged): the tag lives on its buffers until the database answers.
	LoadFailing bool `json:"loadFailing"`
}

// segmentList is the answer of GET /segment.
type segmentList struct {
	Tags []segmentTag `json:"tags"`
}

// listSegments serves /segment: the tags served, with their buffers.
func (s *Server) listSegments(c echo.Context) error {
	seg, err := s.segments()
	if err != nil {
		return err
	}
	who := caller(c)
	if !who.AllowsAnySegment() {
		return s.authorize(c, access.ScopeAllSegments) // refused: names the scope
	}
	list := segmentList{Tags: []segmentTag{}}
	for _, tag := range seg.Tags() {
		if !who.Allows(access.SegmentScope(tag)) {
			continue // a client sees the tags it may take IDs of
		}
		st, err := seg.Status(tag)
		if errors.Is(err, intf.ErrUnknownTag) {
			continue // removed since Tags
		}
		if err != nil {
			return err
		}
		t := segmentTag{Tag: tag, Current: st.Current, Spare: st.Spare, Step: st.Step, DBStep: st.Floor,
			Loading: st.Loading, LoadFailing: st.LastError != nil}
		if !st.LastLoad.IsZero() {
			t.LastLoad = st.LastLoad.UTC().Format(timeLayout)
		}
		list.Tags = append(list.Tags, t)
	}
	return c.JSON(http.StatusOK, list)
}
