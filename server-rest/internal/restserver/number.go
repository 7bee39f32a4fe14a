package restserver

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/ctxtime"
)

// nextNumber serves /number/{tag}: the next number of a period tag,
// formatted, as JSON {"number":"ORD20261127000123","period":"20261127","seq":123}.
// It is guarded as /segment/{tag}: the scope segment:<tag>, one ID of the
// quota.
func (s *Server) nextNumber(c echo.Context) error {
	if strings.Contains(c.Param("tag"), "/") {
		return echo.ErrNotFound // as /segment/{tag}
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
	if _, err := parseParams(c.Request().URL.RawQuery); err != nil {
		return err
	}
	seg, err := s.segments()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if s.callTimeout > 0 {
		d := ctxtime.WithTimeoutCause(ctx, s.callTimeout, errCallTimeout)
		defer d.Stop()
		ctx = d
	}
	grant, err := s.take(c, 1)
	if err != nil {
		return err
	}
	n, err := seg.NextNumber(ctx, tag)
	if err != nil {
		grant.Done(0)
		if errors.Is(err, intf.ErrUnknownTag) { // the hint of a period tag, not a plain one
			return &apiError{Status: http.StatusNotFound, Param: "tag", Err: err,
				Msg: err.Error() + ": create it first (vesta-segment create-tag TAG --group day|month|year --format 'ORD{yyyyMMdd}{seq:6}')"}
		}
		return s.callError(ctx, err)
	}
	grant.Done(1)
	return c.JSON(http.StatusOK, n)
}
