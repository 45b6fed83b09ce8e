package document

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestURLUnescaper: decoded in chunks of any size, what url.PathUnescape
// decodes comes out the same, and what it refuses is refused.
func TestURLUnescaper(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "abc", "%3CmxCell%20id%3D%22a%22%2F%3E", "a+b%2B%25", "%e2%82%AC", "%", "%4", "%zz", "x%4g"} {
		want, wantErr := url.PathUnescape(in)
		for size := 1; size <= len(in)+1; size++ {
			var u urlUnescaper
			var out []byte
			var err error
			for p := in; len(p) > 0 && err == nil; {
				n := min(size, len(p))
				out, err = u.write(out, []byte(p[:n]))
				p = p[n:]
			}
			if err == nil && u.n > 0 {
				err = url.EscapeError(string(u.pend[:u.n]))
			}
			if wantErr != nil {
				assert.Error(t, err, "%q in chunks of %d", in, size)
				continue
			}
			assert.NoError(t, err, "%q in chunks of %d", in, size)
			assert.Equal(t, want, string(out), "%q in chunks of %d", in, size)
		}
	}
}

// TestDrawioCompressedStreams: a compressed page of 20,000 cells (3.6 MB
// of model, 7 MB URL-encoded) is read through windows of 4 KiB: the
// decoder never holds more than a few windows of it, whatever its size.
func TestDrawioCompressedStreams(t *testing.T) {
	t.Parallel()
	var model strings.Builder
	model.WriteString(`<mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/>`)
	for i := range 20000 {
		fmt.Fprintf(&model, `<mxCell id="v%d" value="Step %d &amp; more" style="rounded=0;html=1;" vertex="1" parent="1"><mxGeometry x="1" y="2" width="120" height="60" as="geometry"/></mxCell>`, i, i)
	}
	model.WriteString(`</root></mxGraphModel>`)
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, flate.DefaultCompression)
	_, _ = fw.Write([]byte(url.PathEscape(model.String())))
	_ = fw.Close()
	require.Greater(t, model.Len(), 3<<20)

	dr := &drawioReader{interned: map[string]string{}}
	in := dr.inflate(base64.StdEncoding.EncodeToString(z.Bytes()))
	defer in.fr.Close()
	ahead := readAhead(in, 4096)
	defer ahead.Close()
	d := newDrawioReader(ahead)
	d.want = 4096
	starts, most := 0, 0
	for {
		k, err := d.next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if k == xmlStart && d.name == "mxCell" {
			starts++
		}
		most = max(most, len(d.s))
	}
	assert.Equal(t, 20002, starts)
	assert.LessOrEqual(t, most, 3*4096, "the window, not the page")
	assert.Equal(t, int64(model.Len()), dr.inflated)
}
