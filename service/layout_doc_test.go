package service

import (
	"bufio"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/intf"
)

// TestLayoutDocExamples keeps the worked examples in docs/id-layout.md true.
func TestLayoutDocExamples(t *testing.T) {
	f, err := os.Open("../docs/id-layout.md")
	require.NoError(t, err)
	defer f.Close()
	svc, err := New(t.Context(), Settings{NoDataDir: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer svc.Close()
	rows := 0
	sc := bufio.NewScanner(f)
	inTable := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "| id | version |") {
			inTable = true
			continue
		}
		if !inTable || strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		var v [7]int64
		cells := strings.Split(strings.Trim(line, "| "), "|")
		require.Len(t, cells, 7, line)
		for i, c := range cells {
			v[i], err = strconv.ParseInt(strings.TrimSpace(c), 10, 64)
			require.NoError(t, err, line)
		}
		want := intf.IdFields{Version: v[1], Type: v[2], GenMethod: v[3], Time: v[4], Seq: v[5], Machine: v[6]}
		id, err := svc.MakeId(t.Context(), intf.FromFields(want))
		require.NoError(t, err, line)
		assert.Equal(t, intf.Id(v[0]), id, line)
		got, err := svc.ExpId(t.Context(), intf.Id(v[0]))
		require.NoError(t, err)
		assert.Equal(t, want, got, line)
		rows++
	}
	assert.Equal(t, 7, rows, "examples found")
}
