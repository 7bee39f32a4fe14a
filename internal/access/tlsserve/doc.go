// Package tlsserve puts TLS on the listeners of the vesta-go servers:
// TLS 1.2 or later with AEAD cipher suites only, a certificate and key
// reloaded from their files without a restart (Certs: new handshakes get
// the new certificate, open connections keep theirs, so no call fails),
// and mutual TLS against a client CA that reloads the same way.
//
// Listener terminates TLS on a net.Listener. Its connections do their
// handshake on first use, on the goroutine that serves them and within
// that server's read deadline, so a slow handshake holds no accept loop;
// a handshake that fails is counted by reason (Stats: plain text on the
// TLS port, no client certificate, one from another CA, a timeout, ...)
// and logged at most once per interval. A plain HTTP request to the TLS
// port can be answered with a readable refusal (Options.PlainHTTPReply).
//
// It links only the standard library.
package tlsserve
