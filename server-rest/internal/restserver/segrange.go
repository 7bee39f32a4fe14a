package restserver

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/ctxtime"
)

// segmentRangeBody is the answer of /segment/{tag}/range: the IDs
// start..end-1 are the caller's alone. The numbers are strings in JSON,
// as every ID of this API.
type segmentRangeBody struct {
	Tag   string  `json:"tag"`
	Start intf.Id `json:"start"`
	End   intf.Id `json:"end"`
}

// segmentRange serves /segment/{tag}/range?size=N: a range of N IDs of the
// tag handed out whole, for a client that serves them itself (without
// size: the tag's step). It is allocated from the store like the server's
// own ranges, so nobody else ever gets its IDs. size is bounded by
// segmentMaxRange; a quota charges the range's IDs before the store is
// asked, and cuts it to the caller's burst (access.Guard.TakeRange).
func (s *Server) segmentRange(c echo.Context) error {
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
	p, err := parseParams(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	want := "an integer 1.." + strconv.FormatInt(s.maxRange, 10) + " (segmentMaxRange), or no size for the tag's step"
	size, given, err := p.int64("size", want)
	if err != nil {
		return err
	}
	if given && (size < 1 || size > s.maxRange) {
		return badParam("size", "%d is out of range: want %s", size, want)
	}
	seg, err := s.segments()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if s.callTimeout > 0 {
		d := ctxtime.WithTimeoutCause(ctx, s.callTimeout, errCallTimeout) // a timer only if the call waits
		defer d.Stop()
		ctx = d
	}
	grant := access.RangeGrant{Size: size}
	if s.guard != nil {
		req := c.Request()
		if grant, err = s.guard.TakeRange(req.Context(), caller(c), req.RemoteAddr, seg, tag, size); err != nil {
			return s.callError(ctx, err)
		}
	}
	r, err := seg.NextRange(ctx, tag, grant.Size)
	r = grant.Settle(r, err)
	if err != nil {
		return s.callError(ctx, err)
	}
	return c.JSON(http.StatusOK, segmentRangeBody{Tag: tag, Start: intf.Id(r.Start), End: intf.Id(r.End)})
}
