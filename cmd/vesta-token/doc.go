// Command vesta-token makes the bearer tokens of a vesta-go server's auth
// file (docs/security.md): a new random token and the tokenSHA256 line
// the auth file holds instead of it (printed as the client's entry, or
// written into the auth file: created with its header, or appended to),
// or the line of an existing token.
//
//	vesta-token new --name orders --scopes genid,decode,segment:order --rate 200000 --burst 20000
//	vesta-token new --name orders --scopes genid --out orders.token   # the token into a 0600 file
//	vesta-token new --name ops --scopes metrics --out ops.token --auth-file auth.yaml # the entry into the file
//	vesta-token hash < orders.token                                   # the tokenSHA256 line of a token
//
// The token is printed (or written to --out) once: the server never
// stores it, only its SHA-256, so a lost token is replaced, not recovered.
// Give it to the client in a file or an environment variable, never on a
// command line.
package main
