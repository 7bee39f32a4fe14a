package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// server-rest tells its life in the words server-rpc uses, in order:
// "listening" once the ID service is ready, so that the line an operator
// waits for means IDs are served (its port answers /healthz before).
func TestLifeInTheLog(t *testing.T) {
	t.Parallel() // its own server process, data dir and port
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "6", "--data-dir", t.TempDir(), "--segment-tags", "order",
		"--shutdown-timeout", "7s")
	base := p.waitReady(t)
	getBody(t, base+"/genid", "")
	p.stop(t)
	msg := regexp.MustCompile(`msg="(vesta: (segment mode on|id service ready|listening|shutting down[^"]*|stopped))"`)
	var got []string
	for _, l := range strings.Split(p.logText(), "\n") {
		if m := msg.FindStringSubmatch(l); m != nil {
			got = append(got, m[1])
		}
	}
	assert.Equal(t, []string{"vesta: segment mode on", "vesta: id service ready", "vesta: listening",
		"vesta: shutting down: finishing the calls in flight", "vesta: stopped"}, got, p.logText())
	assert.Regexp(t, `msg="vesta: shutting down: finishing the calls in flight" server=rest timeout=7s`, p.logText(),
		"shutdownTimeout is a key, as server-rpc's")
	assert.NotContains(t, p.logText(), `msg="rest: `, "the server's life is logged as vesta:, as server-rpc's")
}
