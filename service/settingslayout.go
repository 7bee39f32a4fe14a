package service

import (
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/machineid"
)

// layout is the layout of s, defaults filled in (EpochMillis 0 is Vesta's
// epoch).
func (s Settings) layout() machineid.Layout {
	epoch := s.EpochMillis
	if epoch == 0 {
		epoch = intf.DefaultEpochMillis
	}
	return machineid.Layout{EpochMillis: epoch, Type: s.Type, GenMethod: s.GenMethod, Version: s.Version}
}
