package pglease_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service"
	"github.com/vesta-go/vesta/service/backend/pglease"
)

const secret = "s3cr3t-pw"

func TestOptionsDefaults(t *testing.T) {
	l, err := pglease.New(pglease.Options{DSN: "postgres://ids:" + secret + "@db.example:5432/ids"})
	require.NoError(t, err)
	o := l.Options()
	assert.Equal(t, pglease.DefaultTable, o.Table)
	assert.Equal(t, pglease.DefaultPrefix, o.Prefix)
	assert.Equal(t, pglease.DefaultTTL, o.TTL)
	assert.Equal(t, pglease.DefaultDialTimeout, o.DialTimeout)
	assert.Equal(t, pglease.DefaultMaxClockSkew, o.MaxClockSkew)
	assert.NotEmpty(t, o.NodeName)
	assert.Nil(t, o.MachineRange)
}

func TestOptionsInvalid(t *testing.T) {
	good := pglease.Options{DSN: "postgres://ids:" + secret + "@127.0.0.1:5432/ids"}
	cases := []struct {
		option string
		edit   func(*pglease.Options)
	}{
		{"DSN", func(o *pglease.Options) { o.DSN = "" }},
		{"DSN", func(o *pglease.Options) { o.DSN = "postgres://ids:" + secret + "@host:notaport/db" }},
		{"DSN", func(o *pglease.Options) { o.DSN = "host=h port=99999999 password=" + secret }},
		{"Table", func(o *pglease.Options) { o.Table = "machines; DROP TABLE x" }},
		{"Table", func(o *pglease.Options) { o.Table = "a.b.c" }},
		{"TTL", func(o *pglease.Options) { o.TTL = 1500 * time.Millisecond }},
		{"TTL", func(o *pglease.Options) { o.TTL = 2 * time.Hour }},
		{"DialTimeout", func(o *pglease.Options) { o.DialTimeout = time.Hour }},
		{"MaxClockSkew", func(o *pglease.Options) { o.MaxClockSkew = -time.Second }},
		{"NodeName", func(o *pglease.Options) { o.NodeName = "two\nlines" }},
		{"MachineRange", func(o *pglease.Options) { o.MachineRange = &pglease.Range{First: 7, Last: 3} }},
		{"MachineRange", func(o *pglease.Options) { o.MachineRange = &pglease.Range{First: 0, Last: 1024} }},
	}
	for _, tc := range cases {
		o := good
		tc.edit(&o)
		_, err := pglease.New(o)
		require.Error(t, err, tc.option)
		var oe *pglease.OptionError
		require.True(t, errors.As(err, &oe), "%s: an *OptionError: %v", tc.option, err)
		assert.Equal(t, tc.option, oe.Option)
		assert.ErrorIs(t, err, intf.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "pglease: option "+tc.option)
		assert.NotContains(t, err.Error(), secret, "the password is never shown")
		assert.Equal(t, err.Error(), o.Validate().Error(), "Validate says what New says")
	}
}

// A database that does not answer fails the start within the dial
// timeout, naming the server but never the password.
func TestDatabaseDownAtStart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close())
	l, err := pglease.New(pglease.Options{
		DSN:    fmt.Sprintf("postgres://ids:%s@%s/ids?sslmode=disable", secret, dead),
		Common: pglease.Common{DialTimeout: time.Second, Logger: testLog(t)},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(bg, 20*time.Second)
	defer cancel()
	_, err = service.New(ctx, service.Settings{Lease: l, NoDataDir: true, Logger: testLog(t)})
	require.Error(t, err)
	assert.NoError(t, ctx.Err(), "the lease gave up by itself")
	assert.ErrorIs(t, err, intf.ErrUnavailable)
	assert.Contains(t, err.Error(), "PostgreSQL "+dead+"/ids")
	assert.NotContains(t, err.Error(), secret)
	t.Log(err)
}
