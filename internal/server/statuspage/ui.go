package statuspage

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"

	_ "embed"
)

// uiHTML is the page of /ui: one file, its CSS, script and chart inline,
// so it works offline and behind any proxy.
//
//go:embed ui.html
var uiHTML []byte

// uiCSP is the page's Content-Security-Policy: nothing may load, nothing
// may frame it, it talks to its own origin only, and its one inline style
// and script run by their hashes — no other inline code (an injected
// <script> or style attribute) would.
var uiCSP = "default-src 'none'; connect-src 'self'; style-src " + inlineHash("style") +
	"; script-src " + inlineHash("script") + "; img-src data:; frame-ancestors 'none'"

// inlineHash is the CSP source of the content of uiHTML's <tag> element.
func inlineHash(tag string) string {
	_, rest, _ := bytes.Cut(uiHTML, []byte("<"+tag+">"))
	body, _, _ := bytes.Cut(rest, []byte("</"+tag+">"))
	sum := sha256.Sum256(body)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}
