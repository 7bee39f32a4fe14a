package etcdlease_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
	"github.com/vesta-go/vesta/service/backend/etcdlease"
)

func TestOptionsDefaults(t *testing.T) {
	l, err := etcdlease.New(etcdlease.Options{Endpoints: []string{"127.0.0.1:2379"}})
	require.NoError(t, err)
	o := l.Options()
	assert.Equal(t, etcdlease.DefaultPrefix, o.Prefix)
	assert.Equal(t, time.Minute, o.TTL)
	assert.Equal(t, 5*time.Second, o.DialTimeout)
	assert.Equal(t, time.Second, o.MaxClockSkew)
	assert.True(t, strings.HasSuffix(o.NodeName, "-"+strconv.Itoa(os.Getpid())), "hostname-pid: %s", o.NodeName)
	assert.NotNil(t, o.Logger)
	assert.Equal(t, "/vesta/machines/7", l.Keys().Machine(7))
	assert.Equal(t, "/vesta/marks/7", l.Keys().Mark(7))
	assert.Equal(t, "/vesta/clocks/"+o.NodeName, l.Keys().Clock(o.NodeName))

	l, err = etcdlease.New(etcdlease.Options{Endpoints: []string{"https://etcd-0:2379"}, Common: etcdlease.Common{Prefix: "/ids/"}})
	require.NoError(t, err)
	assert.Equal(t, "/ids", l.Options().Prefix, "trailing slash trimmed")
}

func TestOptionsInvalid(t *testing.T) {
	ep := []string{"127.0.0.1:2379"}
	cases := []struct {
		option string
		o      etcdlease.Options
	}{
		{"Endpoints", etcdlease.Options{}},
		{"Endpoints", etcdlease.Options{Endpoints: []string{"etcd"}}},
		{"Endpoints", etcdlease.Options{Endpoints: []string{"ftp://etcd:2379"}}},
		{"Endpoints", etcdlease.Options{Endpoints: []string{"127.0.0.1:2379", ""}}},
		{"Endpoints", etcdlease.Options{Endpoints: []string{"https://ids:s3cret@etcd-0:2379"}}},
		{"Prefix", etcdlease.Options{Endpoints: ep, Common: etcdlease.Common{Prefix: "/"}}},
		{"Prefix", etcdlease.Options{Endpoints: ep, Common: etcdlease.Common{Prefix: "/my ids"}}},
		{"TTL", etcdlease.Options{Endpoints: ep, Common: etcdlease.Common{TTL: time.Second}}},
		{"TTL", etcdlease.Options{Endpoints: ep, Common: etcdlease.Common{TTL: 2500 * time.Millisecond}}},
		{"TTL", etcdlease.Options{Endpoints: ep, Common: etcdlease.Common{TTL: 2 * time.Hour}}},
		{"DialTimeout", etcdlease.Options{Endpoints: ep, Common: etcdlease.Common{DialTimeout: time.Microsecond}}},
		{"MaxClockSkew", etcdlease.Options{Endpoints: ep, Common: etcdlease.Common{MaxClockSkew: -time.Second}}},
		{"NodeName", etcdlease.Options{Endpoints: ep, Common: etcdlease.Common{NodeName: "a/b"}}},
		{"KeyFile", etcdlease.Options{Endpoints: ep, CertFile: "c.pem"}},
		{"Password", etcdlease.Options{Endpoints: ep, Username: "root"}},
		{"CACertFile", etcdlease.Options{Endpoints: ep, CACertFile: filepath.Join(t.TempDir(), "missing.pem")}},
	}
	for _, tc := range cases {
		t.Run(tc.option, func(t *testing.T) {
			_, err := etcdlease.New(tc.o)
			var oe *etcdlease.OptionError
			require.True(t, errors.As(err, &oe), "an *OptionError: %v", err)
			assert.Equal(t, tc.option, oe.Option)
			assert.ErrorIs(t, err, intf.ErrInvalidArgument)
			assert.Contains(t, err.Error(), "option "+tc.option)
			assert.NotContains(t, err.Error(), "s3cret", "no password in an error")
		})
	}
}

func TestOptionsTLSFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeSelfSigned(t, dir)
	_, err := etcdlease.New(etcdlease.Options{Endpoints: []string{"https://127.0.0.1:2379"},
		CACertFile: certFile, CertFile: certFile, KeyFile: keyFile})
	require.NoError(t, err)

	_, err = etcdlease.New(etcdlease.Options{Endpoints: []string{"127.0.0.1:2379"}, CACertFile: keyFile})
	var oe *etcdlease.OptionError
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, "CACertFile", oe.Option, "a key is no CA certificate")

	_, err = etcdlease.New(etcdlease.Options{Endpoints: []string{"127.0.0.1:2379"}, CertFile: certFile, KeyFile: filepath.Join(dir, "none.pem")})
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, "CertFile", oe.Option)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// writeSelfSigned writes a self-signed certificate and its key as PEM.
func writeSelfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vesta-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certFile, keyFile
}
