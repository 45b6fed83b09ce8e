package document

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
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
