package restserver

import (
	"github.com/labstack/echo/v4"

	"github.com/vesta-go/vesta/intf"
)

// makeIdOptional are /makeid's optional fields besides type, each set on
// the request only when given, as Vesta's longer makeId arities do.
var makeIdOptional = []struct {
	name string
	with func(intf.MakeIdRequest, int64) intf.MakeIdRequest
}{
	{"machine", intf.MakeIdRequest.WithMachine},
	{"genMethod", intf.MakeIdRequest.WithGenMethod},
	{"version", intf.MakeIdRequest.WithVersion},
}

// makeId serves /makeid?time=&seq=[&machine&genMethod&type&version&format]:
// omitted fields come from the server's configuration; the ID is written
// in ?format= (decimal by default).
func (s *Server) makeId(c echo.Context) error {
	p, err := parseParams(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	typ, typeGiven, err := p.idType("type")
	if err != nil {
		return err
	}
	layoutType := s.idType // for the ranges in error messages
	if typeGiven {
		layoutType = typ
	}
	tf, err := p.required("time", fieldRange("time", layoutType))
	if err != nil {
		return err
	}
	seq, err := p.required("seq", fieldRange("seq", layoutType))
	if err != nil {
		return err
	}
	req := intf.MakeIdRequest{Time: tf, Seq: seq}
	if typeGiven {
		req = req.WithType(int64(typ))
	}
	for _, f := range makeIdOptional {
		v, given, err := p.int64(f.name, fieldRange(f.name, layoutType))
		if err != nil {
			return err
		}
		if given {
			req = f.with(req, v)
		}
	}
	_, form, err := s.requestForm(c.Request().Context(), p)
	if err != nil {
		return err
	}
	svc, err := s.service()
	if err != nil {
		return err
	}
	id, err := svc.MakeId(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return writeId(c, id, wantsJSON(c.Request()), form)
}
