package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/service/backend/sqlitestore"
	"github.com/vesta-go/vesta/service/backend/stores"
	"github.com/vesta-go/vesta/service/segment/segstore"
)

// fetch returns the status and body of a GET.
func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// With no segment key set, server-rest creates no segments.db: a tag
// request is a 404 naming how to create the tag. A tag created meanwhile
// (as vesta-segment create-tag does, in its own process) is served without
// a restart, and /segment shows a tag not yet asked for with its database
// step.
func TestSegmentModeUnasked(t *testing.T) {
	t.Parallel() // its own server process, data dir and port
	dataDir := t.TempDir()
	file := filepath.Join(dataDir, sqlitestore.FileName)
	p := start(t, "--listen", "127.0.0.1:0", "--machine", "4", "--data-dir", dataDir)
	base := p.waitReady(t)
	status, body := fetch(t, base+"/segment/order")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, "create it first (segmentTags, or vesta-segment create-tag)")
	status, body = fetch(t, base+"/segment")
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"tags":[]}`, body)
	getBody(t, base+"/genid", "")
	assert.NoFileExists(t, file, "no segment key set: nothing created")
	assert.FileExists(t, filepath.Join(dataDir, "highwater"))

	ctx := context.Background()
	admin, err := stores.OpenStore(ctx, stores.Config{DataDir: dataDir, OnDemand: true}) // vesta-segment's store
	require.NoError(t, err)
	require.NoError(t, admin.CreateTag(ctx, segstore.TagInfo{Tag: "order", MaxId: 1, Step: 500}))
	require.NoError(t, admin.CreateTag(ctx, segstore.TagInfo{Tag: "invoice", MaxId: 1000, Step: 300}))
	require.NoError(t, admin.Close())
	require.Eventually(t, func() bool { // an unknown tag rereads the list at most once a second
		status, _ := fetch(t, base+"/segment/order")
		return status == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "the tag created while the server runs is served")

	var list struct {
		Tags []struct {
			Tag          string
			Step, DBStep int64
		}
	}
	status, body = fetch(t, base+"/segment")
	require.Equal(t, http.StatusOK, status)
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	require.Len(t, list.Tags, 2, body)
	assert.Equal(t, "invoice", list.Tags[0].Tag)
	assert.Equal(t, []int64{0, 300}, []int64{list.Tags[0].Step, list.Tags[0].DBStep}, "not asked for yet: its database step")
	p.stop(t)
}
