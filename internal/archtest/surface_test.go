package archtest

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vesta-go/vesta/internal/apicount"
)

// maxSurface bounds the exported names of the packages an embedder reads
// (go/doc's count, as scripts/size.sh prints it): the contract, the
// generator, the client and the segment generator. A name added past it
// must pay for itself by taking another out.
const maxSurface = 250

func TestPublicSurfaceStaysReadable(t *testing.T) {
	total := 0
	for _, dir := range []string{"intf", "service", "client", "service/segment"} {
		n, err := apicount.Count(filepath.Join("..", "..", dir))
		require.NoError(t, err, dir)
		require.Positive(t, n, "%s has exported names", dir)
		t.Logf("%s: %d exported names", dir, n)
		total += n
	}
	assert.LessOrEqual(t, total, maxSurface, "exported names of intf, service, client and service/segment")
}
