package restserver

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/intf"
)

// genId serves /genid: one ID, or with ?count=N a batch of N.
func (s *Server) genId(c echo.Context) error {
	r := c.Request()
	if r.URL.RawQuery == "" { // the hot path: nothing to parse
		return s.genOne(c)
	}
	p, err := parseParams(r.URL.RawQuery)
	if err != nil {
		return err
	}
	if _, batch := p.get("count"); !batch {
		return s.genOne(c)
	}
	want := "an integer 1.." + strconv.Itoa(s.cfg.MaxBatch) + " (maxBatch)"
	n, err := p.required("count", want)
	if err != nil {
		return err
	}
	if err := intf.CheckRange("count", n, 1, int64(s.cfg.MaxBatch)); err != nil {
		return err
	}
	svc, err := s.service()
	if err != nil {
		return err
	}
	ids, err := svc.GenIds(r.Context(), int(n))
	if err != nil {
		return err
	}
	s.metrics.issued.Add(float64(len(ids)))
	return writeIds(c, ids, wantsJSON(r))
}

func (s *Server) genOne(c echo.Context) error {
	svc, err := s.service()
	if err != nil {
		return err
	}
	id, err := svc.GenId(c.Request().Context())
	if err != nil {
		return err
	}
	s.metrics.issued.Inc()
	return writeId(c, id, wantsJSON(c.Request()))
}
