package nettest_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/nettest"
)

func TestSilentAcceptsAndNeverAnswers(t *testing.T) {
	c, err := net.Dial("tcp", nettest.Silent(t))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("hello?"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout(), "no answer, only the read deadline: %v", err)
}
