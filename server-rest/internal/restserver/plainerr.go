package restserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// goErrorHeaders follow the status line of every error net/http answers
// itself, before any handler runs: a request whose headers pass
// MaxHeaderBytes (431), that is not HTTP (400), with an unknown transfer
// coding (501). It writes each such answer in one Write straight to the
// connection. No answer through a handler can carry these headers in this
// order: net/http writes a handler's headers sorted (Connection before
// Content-Type) and always with a Date.
const goErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// plainToJSON returns the JSON form of one of net/http's own plain-text
// error answers, with the shape of every other error of the API
// ({"error": ...}); ok is false for any other bytes.
func plainToJSON(p []byte) (out []byte, ok bool) {
	const proto = "HTTP/1.1 "
	// An error's status begins with 4 or 5: any other response, every
	// 200 among them, is let through on that byte alone.
	if len(p) > 1024 || len(p) <= len(proto) || (p[len(proto)] != '4' && p[len(proto)] != '5') ||
		!bytes.HasPrefix(p, []byte(proto)) {
		return nil, false
	}
	statusLine, body, found := bytes.Cut(p[len(proto):], []byte(goErrorHeaders))
	if !found || len(statusLine) < 3 {
		return nil, false
	}
	code, err := strconv.Atoi(string(statusLine[:3]))
	if err != nil || code < 400 || code > 599 {
		return nil, false
	}
	var msg string
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		msg = fmt.Sprintf("request headers too large: the limit is %d bytes", maxHeaderBytes)
	case http.StatusNotImplemented:
		msg = "unsupported transfer encoding: use none, or chunked"
	default:
		// The body is "400 Bad Request", or "400 Bad Request: <why>".
		msg = "bad request: not a valid HTTP/1.1 request"
		if _, why, has := strings.Cut(string(body), ": "); has {
			msg = "bad request: " + why
		}
	}
	b, _ := json.Marshal(errorBody{Error: msg}) // a struct of strings: cannot fail
	b = append(b, '\n')                         // as every JSON body
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		code, http.StatusText(code), len(b), b), true
}
