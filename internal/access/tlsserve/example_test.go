package tlsserve_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/vesta-go/vesta/internal/access/tlsserve"
	"github.com/vesta-go/vesta/internal/tlstest"
)

// exampleTB stops an example on a failure of tlstest.
type exampleTB struct{}

func (exampleTB) Helper()                   {}
func (exampleTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

func ExampleNewListener() {
	// The files a server's tlsCert and tlsKey name (made here for the example).
	dir, _ := os.MkdirTemp("", "tlsserve-example")
	defer os.RemoveAll(dir)
	ca := tlstest.NewCA(exampleTB{}, "example CA")
	files := tlstest.Write(exampleTB{}, dir, ca.Server(exampleTB{}), nil)

	certs, err := tlsserve.Load(tlsserve.Files{Cert: files.Cert, Key: files.Key})
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	tl := tlsserve.NewListener(ln, certs.ServerConfig(), tlsserve.Options{Logger: slog.New(slog.DiscardHandler)})
	defer tl.Close()
	go func() {
		c, err := tl.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.WriteString(c, "hello over TLS") // the handshake happens here, on first use
	}()
	// Later, renewed files go in force for new handshakes: certs.Reload(false).

	c, err := tls.Dial("tcp", tl.Addr().String(), tlstest.ClientConfig(ca, nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	msg, _ := io.ReadAll(c)
	fmt.Println(string(msg), c.ConnectionState().Version >= tls.VersionTLS12)
	// Output: hello over TLS true
}
