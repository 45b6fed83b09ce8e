package testchart

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinearDrawioCompressed: the compressed page undoes, as draw.io's
// Graph.decompress does (base64, raw inflate, decodeURIComponent), to the
// plain file's <mxGraphModel> byte for byte.
func TestLinearDrawioCompressed(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 7, 1000} {
		var plain, packed bytes.Buffer
		require.NoError(t, LinearDrawio(&plain, n))
		require.NoError(t, LinearDrawioCompressed(&packed, n))
		s := packed.String()
		require.True(t, strings.HasPrefix(s, "<mxfile "))
		_, body, ok := strings.Cut(s, `id="linear">`)
		require.True(t, ok)
		body, _, ok = strings.Cut(body, "</diagram>")
		require.True(t, ok)
		raw, err := base64.StdEncoding.DecodeString(body)
		require.NoError(t, err)
		inflated, err := io.ReadAll(flate.NewReader(bytes.NewReader(raw)))
		require.NoError(t, err)
		assert.NotContains(t, string(inflated), "<", "URL-encoded before deflate")
		model, err := url.PathUnescape(string(inflated))
		require.NoError(t, err)
		p := plain.String()
		want := p[strings.Index(p, "<mxGraphModel") : strings.LastIndex(p, "</mxGraphModel>")+len("</mxGraphModel>")]
		assert.Equal(t, want, model)
	}
}

func TestEncodeURIComponent(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "a%20b%3C%2F%3E%22%3D%26-_.!~*'()%C3%A9", encodeURIComponent(`a b</>"=&-_.!~*'()é`))
}
