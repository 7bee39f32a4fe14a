package restserver

import (
	"context"
	"errors"
	"strings"

	"github.com/vesta-go/vesta/intf"
)

// idForm writes an ID in the form a request named with ?format= (nil:
// the signed decimal, the hot path's, which appends without it).
type idForm func(intf.Id) string

// formWant describes the values ?format= takes.
var formWant = func() string {
	names := make([]string, len(intf.Forms))
	for i, f := range intf.Forms {
		names[i] = string(f)
	}
	return "one of " + strings.Join(names, ", ")
}()

// requestForm reads ?format= of p: none given, or dec, means the decimal
// (nil idForm); an empty value is a 400; friendly reads the time with the
// service's epoch.
func (s *Server) requestForm(ctx context.Context, p params) (intf.Form, idForm, error) {
	raw, given, err := p.get("format")
	if err != nil || !given || raw == string(intf.FormDec) {
		return intf.FormDec, nil, err
	}
	f, err := intf.ParseForm(raw)
	if err != nil {
		return "", nil, badParam("format", "%s is not a form of an ID: want %s", quoteShort(raw), formWant)
	}
	if f != intf.FormFriendly {
		return f, func(id intf.Id) string { return id.Format(f) }, nil
	}
	epoch, err := s.epochMillis(ctx)
	if err != nil {
		return "", nil, err
	}
	return f, func(id intf.Id) string { return id.FriendlyAt(epoch) }, nil
}

// epochMillis is the service's epoch: the instant of time field 0.
func (s *Server) epochMillis(ctx context.Context) (int64, error) {
	svc, err := s.service()
	if err != nil {
		return 0, err
	}
	t, err := svc.TransTime(ctx, 0, intf.MaxPeak)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}

// parseIdIn reads the ID of parameter name in form f, the service's epoch
// for friendly.
func (s *Server) parseIdIn(ctx context.Context, name, raw string, f intf.Form) (intf.Id, error) {
	if f == intf.FormDec {
		return parseId(name, raw)
	}
	var (
		id  intf.Id
		err error
	)
	if f == intf.FormFriendly {
		epoch, eerr := s.epochMillis(ctx)
		if eerr != nil {
			return 0, eerr
		}
		id, err = intf.ParseFriendlyAt(raw, epoch)
	} else {
		id, err = intf.ParseIdAs(raw, f)
	}
	if err != nil {
		var msg string
		if msg = err.Error(); errors.Is(err, intf.ErrInvalidArgument) {
			msg = strings.TrimPrefix(msg, intf.ErrInvalidArgument.Error()+": ")
		}
		return 0, badParam(name, "%s (format=%s)", msg, f)
	}
	return id, nil
}
