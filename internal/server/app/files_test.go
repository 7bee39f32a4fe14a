package app

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/server/config"
	"github.com/vesta-go/vesta/internal/serverdefaults"
)

// The connection caps fit the file limit with the service's own files kept
// apart: the default is lowered, a value set above it is refused naming
// maxConns, and a limit too small for anything stops the start.
func TestFitConns(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		limit int
		want  int
	}{
		{nil, 20000, serverdefaults.MaxConns},
		{nil, 0, serverdefaults.MaxConns}, // unknown limit: the default
		{nil, 1024, 1024 - serverdefaults.ReservedFiles},
		{[]string{"--max-conns", "500"}, 1024, 500},
		{[]string{"--max-conns", "5000"}, 0, 5000},
	} {
		cfg, err := setup(t, append([]string{"--data-dir", t.TempDir()}, tc.args...)...)
		require.NoError(t, err)
		if len(tc.args) == 0 {
			cfg.MaxConns = 0 // as loaded, before Setup fitted it to this process
		}
		require.NoError(t, fitConns(&cfg, tc.limit), tc)
		assert.Equal(t, tc.want, cfg.MaxConns, tc)
	}

	cfg, err := setup(t, "--data-dir", t.TempDir(), "--max-conns", "1000")
	require.NoError(t, err)
	err = fitConns(&cfg, 1024)
	var ve *config.ValueError
	require.True(t, errors.As(err, &ve), "%v", err)
	assert.ErrorContains(t, err, "maxConns")
	assert.ErrorContains(t, err, "at most 896")
	assert.ErrorContains(t, err, "RLIMIT_NOFILE")

	cfg.MaxConns = 0
	assert.ErrorContains(t, fitConns(&cfg, 100), "raise the limit")
}
