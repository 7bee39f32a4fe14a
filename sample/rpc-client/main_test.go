package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/access"
	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/rpcserver"
	"github.com/vesta-go/vesta/internal/rpcserver/rpctest"
	"github.com/vesta-go/vesta/internal/tlstest"
	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment"
	"github.com/vesta-go/vesta/service/segment/segspec"
)

func TestRun(t *testing.T) {
	srv := rpctest.Start(t, rpctest.Config{Machine: 5})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, []string{srv.Addr}, 2, 3, ""))
	assert.Equal(t, 2, bytes.Count(out.Bytes(), []byte("genid ")))
	assert.Contains(t, out.String(), "genids [")
	assert.Contains(t, out.String(), "machine:5 ")
	assert.Contains(t, out.String(), "genMethod:1 ")
	assert.NotContains(t, out.String(), "segment")
}

func TestRunSegment(t *testing.T) {
	tags, err := segspec.ParseTags("order")
	require.NoError(t, err)
	g, err := stores.Open(context.Background(), stores.Config{Store: segspec.SQLite, DataDir: t.TempDir(), Tags: tags,
		Settings: segment.Settings{Logger: slog.New(slog.DiscardHandler)}})
	require.NoError(t, err)
	defer g.Close()
	srv := rpctest.Start(t, rpctest.Config{Machine: 5, Segments: g})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, []string{srv.Addr}, 1, 3, "order"))
	assert.Contains(t, out.String(), "segment order [1 2 3]\n")
	err = run(ctx, &out, []string{srv.Addr}, 1, 3, "coupon")
	assert.ErrorIs(t, err, intf.ErrUnknownTag)
}

// The sample against a server with TLS, mutual TLS and an auth file: the
// token from a file, never from a flag.
func TestRunSecure(t *testing.T) {
	dir := t.TempDir()
	ca, clientCA := tlstest.NewCA(t, "server CA"), tlstest.NewCA(t, "client CA")
	files := tlstest.Write(t, dir, ca.Server(t), clientCA)
	certs, err := tlsserve.Load(tlsserve.Files(files))
	require.NoError(t, err)
	const token = "vesta_sample-token"
	p, err := access.NewPolicy([]access.Client{{Name: "sample", Tokens: [][32]byte{access.HashToken(token)},
		Scopes: []access.Scope{"genid", "decode"}}})
	require.NoError(t, err)
	g, err := access.NewGuard(access.Options{Policy: p, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := rpctest.Start(t, rpctest.Config{Machine: 6, Guard: g, Options: rpcserver.Options{TLS: certs}})

	me := clientCA.Client(t, "sample")
	caFile, certFile, keyFile, tokenFile := filepath.Join(dir, "root.pem"), filepath.Join(dir, "me.pem"),
		filepath.Join(dir, "me.key"), filepath.Join(dir, "sample.token")
	tlstest.WriteFile(t, caFile, ca.PEM)
	tlstest.WriteFile(t, certFile, me.CertPEM)
	tlstest.WriteFile(t, keyFile, me.KeyPEM)
	tlstest.WriteFile(t, tokenFile, []byte(token+"\n"))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts, err := security{caFile: caFile, certFile: certFile, keyFile: keyFile, tokenFile: tokenFile}.options("")
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, []string{srv.Addr}, 1, 2, "", opts...))
	assert.Contains(t, out.String(), "machine:6 ")

	opts, err = security{caFile: caFile, certFile: certFile, keyFile: keyFile}.options(token) // $VESTA_TOKEN
	require.NoError(t, err)
	require.NoError(t, run(ctx, &out, []string{srv.Addr}, 1, 1, "", opts...))

	opts, err = security{caFile: caFile, certFile: certFile, keyFile: keyFile}.options("")
	require.NoError(t, err)
	assert.ErrorIs(t, run(ctx, &out, []string{srv.Addr}, 1, 1, "", opts...), intf.ErrUnauthenticated)
	_, err = security{certFile: certFile}.options("")
	assert.ErrorContains(t, err, "need --ca-file")
}
