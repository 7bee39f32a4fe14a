package restserver

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/intf"
)

// expIdBody is the JSON of /expid: Vesta's Id plus the ID as a string
// (JavaScript loses integers above 2^53) and its time, readable.
type expIdBody struct {
	intf.IdFields
	Id         intf.Id `json:"id"` // a JSON string
	IDUnsigned string  `json:"idUnsigned"`
	TypeName   string  `json:"typeName"`
	Timestamp  string  `json:"timestamp"`
}

// expId serves /expid?id=N: the ID's fields, decoded by its own type bit.
func (s *Server) expId(c echo.Context) error {
	p, err := parseParams(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	raw, given, err := p.get("id")
	if err != nil {
		return err
	}
	if !given {
		return badParam("id", "missing: want %s", idWant)
	}
	ctx := c.Request().Context()
	form, _, err := s.requestForm(ctx, p)
	if err != nil {
		return err
	}
	id, err := s.parseIdIn(ctx, "id", raw, form)
	if err != nil {
		return err
	}
	svc, err := s.service()
	if err != nil {
		return err
	}
	x, err := svc.ExpId(ctx, id)
	if err != nil {
		return err
	}
	t, err := svc.TransTime(ctx, x.Time, intf.IdType(x.Type))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, expIdBody{
		IdFields:   x,
		Id:         id,
		IDUnsigned: strconv.FormatUint(uint64(id), 10),
		TypeName:   intf.IdType(x.Type).String(),
		Timestamp:  t.Format(timeLayout),
	})
}

// transTimeBody is the JSON of /transtime.
type transTimeBody struct {
	Time       int64  `json:"time"`
	Type       int64  `json:"type"`
	TypeName   string `json:"typeName"`
	Timestamp  string `json:"timestamp"`
	UnixMillis int64  `json:"unixMillis"`
}

// transTime serves /transtime?time=T[&type=]: the time a time field
// stands for, by default in the server's own type.
func (s *Server) transTime(c echo.Context) error {
	p, err := parseParams(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	typ, given, err := p.idType("type")
	if err != nil {
		return err
	}
	if !given {
		typ = s.idType
	}
	tf, err := p.required("time", fieldRange("time", typ))
	if err != nil {
		return err
	}
	svc, err := s.service()
	if err != nil {
		return err
	}
	t, err := svc.TransTime(c.Request().Context(), tf, typ)
	if err != nil {
		return err
	}
	ts := t.Format(timeLayout)
	if wantsJSON(c.Request()) {
		return c.JSON(http.StatusOK, transTimeBody{Time: tf, Type: int64(typ), TypeName: typ.String(), Timestamp: ts, UnixMillis: t.UnixMilli()})
	}
	return c.String(http.StatusOK, ts)
}
