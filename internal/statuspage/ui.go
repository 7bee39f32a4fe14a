package statuspage

import _ "embed"

// uiHTML is the page of /ui: one file, its CSS, script and chart inline,
// so it works offline and behind any proxy.
//
//go:embed ui.html
var uiHTML []byte
