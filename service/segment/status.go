package segment

import "github.com/vesta-go/vesta/service/segment/segbuf"

// Status returns the state of tag's buffers, for monitoring and tests:
// the IDs left in the current range and the spare one, the step of the
// last range and the row's step as the tag list or the last load read it
// (Floor, known before the first load), the ranges themselves, the last
// load and its error, and the IDs handed out since the Generator opened.
func (g *Generator) Status(tag string) (segbuf.Status, error) {
	b, err := g.lookup(tag)
	if err != nil {
		return segbuf.Status{}, err
	}
	return b.Status(), nil
}
