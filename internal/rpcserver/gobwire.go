package rpcserver

import (
	"errors"
	"fmt"
)

// gob's wire format, as much of it as the frameReader reads: a message
// begins with a signed type id; a negative one -id is followed by the
// definition (a wireType) of type id, any other by a value of type id.

// gobInterface is gob's type id of an interface value (encoding/gob's
// bootstrap types: bool 1, int 2, uint 3, float 4, bytes 5, string 6,
// complex 7, interface 8). An interface value may carry type definitions
// inside a value message, where the frameReader would not count them; the
// server reads no interface (net/rpc's Request and rpcapi's Args have
// none), so a type or value that uses it is refused.
const gobInterface = 8

// ErrInterfaceType means a connection sent a gob type or value using the
// interface type, which the server never reads.
var ErrInterfaceType = errors.New("vesta rpc: gob interface types are not accepted")

// errBadTypeDef means a type definition was not gob's encoding of one.
var errBadTypeDef = errors.New("vesta rpc: malformed gob type definition")

// gobUint decodes gob's unsigned integer at the start of b (one byte
// below 128; else a byte holding minus the number of big-endian bytes
// that follow) and says how many bytes it took; 0 means b does not hold
// one.
func gobUint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	n := -int(int8(b[0]))
	if n < 1 || n > 8 || len(b) < 1+n {
		return 0, 0
	}
	var u uint64
	for _, c := range b[1 : 1+n] {
		u = u<<8 | uint64(c)
	}
	return u, 1 + n
}

// gobInt decodes gob's signed integer: an unsigned one whose low bit says
// the rest is complemented.
func gobInt(b []byte) (int64, int) {
	u, n := gobUint(b)
	if u&1 != 0 {
		return ^int64(u >> 1), n
	}
	return int64(u >> 1), n
}

// wireKind is how a field of gob's own type-definition structs is encoded.
type wireKind uint8

const (
	wireInt    wireKind = iota // an int that is not a type id
	wireTypeID                 // a type id the definition refers to
	wireString
	wireStruct      // a struct: elem
	wireStructSlice // a slice of elem
)

type wireField struct {
	kind wireKind
	elem []wireField
}

// The fields of encoding/gob's wireType and of the types it holds, in
// their order: a struct is sent as (field-number delta, value) pairs ended
// by a delta of 0.
var (
	wireCommon     = []wireField{{kind: wireString}, {kind: wireInt}} // Name, Id (its own)
	wireArray      = []wireField{{wireStruct, wireCommon}, {kind: wireTypeID}, {kind: wireInt}}
	wireSlice      = []wireField{{wireStruct, wireCommon}, {kind: wireTypeID}}
	wireFieldType  = []wireField{{kind: wireString}, {kind: wireTypeID}}
	wireStructType = []wireField{{wireStruct, wireCommon}, {wireStructSlice, wireFieldType}}
	wireMap        = []wireField{{wireStruct, wireCommon}, {kind: wireTypeID}, {kind: wireTypeID}}
	wireGobEncoder = []wireField{{wireStruct, wireCommon}}
	// ArrayT, SliceT, StructT, MapT, GobEncoderT, BinaryMarshalerT,
	// TextMarshalerT.
	wireTypeDef = []wireField{{wireStruct, wireArray}, {wireStruct, wireSlice}, {wireStruct, wireStructType},
		{wireStruct, wireMap}, {wireStruct, wireGobEncoder}, {wireStruct, wireGobEncoder}, {wireStruct, wireGobEncoder}}
)

// checkTypeDef reads a type definition's wireType (the message after its
// type id) and refuses one that is malformed or refers to the interface
// type.
func checkTypeDef(b []byte) error {
	w := wireWalker{b: b}
	if err := w.walk(wireTypeDef); err != nil {
		return err
	}
	if len(w.b) != 0 {
		return fmt.Errorf("%w: %d bytes after it", errBadTypeDef, len(w.b))
	}
	return nil
}

// wireWalker reads gob's encodings off b.
type wireWalker struct{ b []byte }

func (w *wireWalker) uint() (uint64, error) {
	u, n := gobUint(w.b)
	if n == 0 {
		return 0, fmt.Errorf("%w: truncated", errBadTypeDef)
	}
	w.b = w.b[n:]
	return u, nil
}

// walk reads a struct of fields; the fields' types are not recursive, so
// neither is the walk, however the bytes nest.
func (w *wireWalker) walk(fields []wireField) error {
	f := -1
	for {
		d, err := w.uint()
		if err != nil {
			return err
		}
		if d == 0 {
			return nil
		}
		if d > uint64(len(fields)-1-f) {
			return fmt.Errorf("%w: field delta %d", errBadTypeDef, d)
		}
		f += int(d)
		if err := w.value(fields[f]); err != nil {
			return err
		}
	}
}

func (w *wireWalker) value(f wireField) error {
	switch f.kind {
	case wireStruct:
		return w.walk(f.elem)
	case wireStructSlice:
		n, err := w.uint()
		if err != nil {
			return err
		}
		if n > uint64(len(w.b)) { // each element takes a byte at least
			return fmt.Errorf("%w: %d elements in %d bytes", errBadTypeDef, n, len(w.b))
		}
		for range n {
			if err := w.walk(f.elem); err != nil {
				return err
			}
		}
		return nil
	case wireString:
		n, err := w.uint()
		if err != nil {
			return err
		}
		if n > uint64(len(w.b)) {
			return fmt.Errorf("%w: truncated string", errBadTypeDef)
		}
		w.b = w.b[n:]
		return nil
	default: // wireInt, wireTypeID: signed
		u, err := w.uint()
		if err != nil {
			return err
		}
		if f.kind == wireTypeID && u == gobInterface<<1 {
			return ErrInterfaceType
		}
		return nil
	}
}
