package connwrap_test

import (
	"crypto/tls"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vesta-go/vesta/internal/connwrap"
)

// counted is a layer that keeps state; wrapped hides what it wraps but
// for NetConn; looped is a wrapper that returns itself.
type (
	counted struct{ net.Conn }
	wrapped struct{ net.Conn }
	looped  struct{ net.Conn }
)

func (w wrapped) NetConn() net.Conn { return w.Conn }
func (l *looped) NetConn() net.Conn { return l }

func TestFind(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	inner := &counted{a}

	got, ok := connwrap.Find[*counted](inner)
	assert.True(t, ok)
	assert.Same(t, inner, got, "the connection itself")

	got, ok = connwrap.Find[*counted](tls.Server(wrapped{inner}, &tls.Config{}))
	assert.True(t, ok, "under tls.Conn and a wrapper")
	assert.Same(t, inner, got)

	_, ok = connwrap.Find[*counted](wrapped{a})
	assert.False(t, ok, "not there")
	_, ok = connwrap.Find[*counted](struct{ net.Conn }{inner})
	assert.False(t, ok, "behind a layer without NetConn")
	_, ok = connwrap.Find[*counted](&looped{a})
	assert.False(t, ok, "a wrapper that returns itself ends the walk")
}

func TestInnermost(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	assert.Equal(t, a, connwrap.Innermost(a), "no layers")
	assert.Equal(t, a, connwrap.Innermost(tls.Server(wrapped{wrapped{a}}, &tls.Config{})))
	assert.Equal(t, a, connwrap.Innermost(struct{ net.Conn }{a}).(struct{ net.Conn }).Conn, "stops at a layer without NetConn")
	l := &looped{a}
	assert.Same(t, l, connwrap.Innermost(l), "a wrapper that returns itself ends the walk")
}

func ExampleFind() {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := tls.Server(wrapped{&counted{a}}, &tls.Config{}) // what a ConnState hook gets
	_, ok := connwrap.Find[*counted](c)
	fmt.Println(ok)
	// Output: true
}
