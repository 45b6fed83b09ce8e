package document

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// drawioDecoder reads the XML draw.io writes: elements, attributes, text,
// comments, CDATA and an <?xml?> declaration. It is not encoding/xml, which
// took 12 µs a node on a 100,000-node chart (most of the import): it
// slices names and values out of its window of the input, copying only
// those with entities. A <!DOCTYPE> (and so any entity but XML's five and
// character references) is refused, nesting is capped at drawioMaxDepth.
//
// It reads its input a window at a time (drawioWindow, cut after a '>'), so
// that neither a large file nor an inflated page is held whole: what a
// caller keeps of a token it copies (drawioReader.keep). A token that does
// not parse while input is left is read again with a window twice as
// large, so every byte is looked at a bounded number of times.
type drawioDecoder struct {
	r       *aheadReader // nil when s is all the input
	eof     bool         // r is used up
	filled  bool         // a window was read
	want    int          // the next window's size
	carry   []byte       // read after the last '>' of the window
	s       string       // the window
	pos     int
	depth   int
	pending string // the end of a self-closing element, when ended
	ended   bool
	// skipping: start checks attributes without keeping them (skip).
	skipping bool
	// The token read last: a start's or an end's local name, a start's
	// attributes (reused: valid until the next token), a text's text.
	// Substrings of the window: valid until the next token.
	name  string
	attrs []xml.Attr
	text  string
	// line is the line of lineAt in s; start is where the last start tag
	// began. line counts on from lineAt, so all the counting is linear.
	line, lineAt, startAt int
}

// drawioWindow is how much the decoder reads at a time (a variable for
// the tests, which read with windows of a few bytes).
var drawioWindow = 1 << 20

// startLine is the line of the last start tag read.
func (d *drawioDecoder) startLine() int {
	d.line = d.lineOf(d.startAt)
	d.lineAt = d.startAt
	return d.line
}

// lineOf is the line of the window's offset at, counted from lineAt.
func (d *drawioDecoder) lineOf(at int) int {
	line := max(d.line, 1)
	if at < d.lineAt {
		return line - strings.Count(d.s[at:d.lineAt], "\n")
	}
	return line + strings.Count(d.s[d.lineAt:at], "\n")
}

// newDrawioReader decodes what r gives, a window at a time.
func newDrawioReader(r *aheadReader) *drawioDecoder {
	return &drawioDecoder{r: r, want: drawioWindow}
}

func (d *drawioDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", d.lineOf(min(d.pos, len(d.s))), fmt.Sprintf(format, args...))
}

// fill moves the window on: it drops what was read before pos, and reads at
// least want more bytes (all of r when that is less), up to the last '>'.
func (d *drawioDecoder) fill() error {
	d.line = d.lineOf(d.pos)
	rest := d.s[d.pos:]
	var w strings.Builder
	w.Grow(len(rest) + len(d.carry) + d.want)
	w.WriteString(rest)
	w.Write(d.carry)
	d.carry = d.carry[:0]
	// The reader's own buffers, not copied on the way.
	for got := 0; got < d.want; {
		chunk, err := d.r.chunk()
		if err == io.EOF {
			d.eof = true
			break
		}
		if err != nil {
			return err
		}
		w.Write(chunk)
		got += len(chunk)
	}
	text := w.String()
	// Cut after the last '>', the rest carried to the next window. With no
	// '>' it all stays in the window: the token in it does not parse, and
	// next asks for a window twice as large.
	if cut := strings.LastIndexByte(text, '>') + 1; !d.eof && cut > 0 {
		d.carry = append(d.carry, text[cut:]...)
		text = text[:cut]
	}
	d.s, d.pos, d.lineAt, d.startAt = text, 0, 0, 0
	if !d.filled {
		d.filled = true
		d.s = strings.TrimPrefix(d.s, "\ufeff")
	}
	return nil
}

// errMore is a token cut off by the end of the window.
var errMore = errors.New("the input ends inside a token")

// xmlKind is the kind of token next read.
type xmlKind uint8

const (
	xmlStart xmlKind = iota + 1 // d.name, d.attrs
	xmlEnd                      // d.name
	xmlText                     // d.text
)

// next reads the next start, end or text (comments and the declaration are
// read past), or returns io.EOF. It returns no interface, so that a token
// allocates nothing: the start's attributes are reused by the next start
// (copy them to keep them).
func (d *drawioDecoder) next() (xmlKind, error) {
	for {
		pos, depth, ended := d.pos, d.depth, d.ended
		k, err := d.next1()
		if err == nil || d.eof {
			return k, err
		}
		// The window ends inside the token, or it is malformed: read it
		// again with more of the input, until there is no more.
		d.pos, d.depth, d.ended = pos, depth, ended
		if err != io.EOF && d.pos < len(d.s) {
			d.want = max(d.want, 2*(len(d.s)-d.pos))
		}
		if ferr := d.fill(); ferr != nil {
			return 0, readErr{ferr}
		}
	}
}

func (d *drawioDecoder) next1() (xmlKind, error) {
	if d.ended {
		d.ended = false
		d.depth--
		d.name = d.pending
		return xmlEnd, nil
	}
	for {
		if d.pos >= len(d.s) {
			return 0, io.EOF
		}
		if d.s[d.pos] != '<' {
			end := strings.IndexByte(d.s[d.pos:], '<')
			if end < 0 {
				if !d.eof {
					return 0, errMore // the text may go on in the next window
				}
				end = len(d.s) - d.pos
			}
			raw := d.s[d.pos : d.pos+end]
			if allXMLSpace(raw) {
				d.pos += end // the indentation between elements: nothing reads it
				continue
			}
			text, err := xmlUnescape(raw)
			if err != nil {
				return 0, d.errorf("%v", err)
			}
			d.pos += end
			d.text = text
			return xmlText, nil
		}
		rest := d.s[d.pos:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := strings.Index(rest[4:], "-->")
			if end < 0 {
				return 0, d.errorf("a comment is not closed")
			}
			d.pos += 4 + end + 3
			continue
		case strings.HasPrefix(rest, "<![CDATA["):
			end := strings.Index(rest[9:], "]]>")
			if end < 0 {
				return 0, d.errorf("a CDATA section is not closed")
			}
			d.text = rest[9 : 9+end]
			d.pos += 9 + end + 3
			return xmlText, nil
		case strings.HasPrefix(rest, "<?"):
			end := strings.Index(rest[2:], "?>")
			if end < 0 {
				return 0, d.errorf("<? is not closed")
			}
			end += 2
			decl := rest[2:end]
			if strings.HasPrefix(decl, "xml") {
				if i := strings.Index(decl, "encoding="); i >= 0 {
					enc, _, _ := strings.Cut(strings.TrimSpace(decl[i+len("encoding="):]), " ")
					enc = strings.Trim(enc, `"'`)
					if !strings.EqualFold(enc, "utf-8") && !strings.EqualFold(enc, "us-ascii") {
						return 0, d.errorf("encoding %q: draw.io writes UTF-8", enc)
					}
				}
			}
			d.pos += end + 2
			continue
		case strings.HasPrefix(rest, "<!"):
			if strings.HasPrefix(rest, "<!DOCTYPE") {
				return 0, d.errorf("it has a DTD (<!DOCTYPE>), which draw.io never writes: refused")
			}
			return 0, d.errorf("<! that is not a comment or CDATA")
		case strings.HasPrefix(rest, "</"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return 0, d.errorf("an end tag is not closed")
			}
			name := strings.TrimSpace(rest[2:end])
			if name == "" {
				return 0, d.errorf("an end tag has no name")
			}
			d.pos += end + 1
			if d.depth == 0 {
				return 0, d.errorf("</%s> closes nothing", name)
			}
			d.depth--
			d.name = localName(name)
			return xmlEnd, nil
		}
		return d.start()
	}
}

// start reads a start tag at d.pos.
func (d *drawioDecoder) start() (xmlKind, error) {
	d.startAt = d.pos
	i := d.pos + 1
	s := d.s
	nameEnd := i
	for nameEnd < len(s) && !isXMLSpace(s[nameEnd]) && s[nameEnd] != '>' && s[nameEnd] != '/' {
		nameEnd++
	}
	if nameEnd == i {
		return 0, d.errorf("< is not followed by a name")
	}
	name := localName(s[i:nameEnd])
	d.attrs = d.attrs[:0]
	i = nameEnd
	for {
		for i < len(s) && isXMLSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return 0, d.errorf("the tag <%s> is not closed", name)
		}
		switch s[i] {
		case '>':
			d.pos = i + 1
			return d.opened(name)
		case '/':
			if i+1 >= len(s) || s[i+1] != '>' {
				return 0, d.errorf("a / in the tag <%s>", name)
			}
			d.pos = i + 2
			d.pending, d.ended = name, true
			return d.opened(name)
		}
		k, colon := i, -1
		for i < len(s) && s[i] != '=' && !isXMLSpace(s[i]) && s[i] != '>' && s[i] != '/' {
			if s[i] == ':' && colon < 0 {
				colon = i - k
			}
			i++
		}
		key := s[k:i]
		for i < len(s) && isXMLSpace(s[i]) {
			i++
		}
		if i >= len(s) || s[i] != '=' {
			return 0, d.errorf("the attribute %q of <%s> has no value", key, name)
		}
		i++
		for i < len(s) && isXMLSpace(s[i]) {
			i++
		}
		if i >= len(s) || s[i] != '"' && s[i] != '\'' {
			return 0, d.errorf("the value of %q in <%s> is not quoted", key, name)
		}
		q := s[i]
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			return 0, d.errorf("the value of %q in <%s> is not closed", key, name)
		}
		raw := s[i+1 : i+1+end]
		if strings.IndexByte(raw, '<') >= 0 {
			d.pos = i
			return 0, d.errorf("a < in the value of %q", key)
		}
		v, err := xmlUnescape(raw)
		if err != nil {
			d.pos = i
			return 0, d.errorf("%v", err)
		}
		i += end + 2
		if d.skipping {
			continue // checked, not kept: nothing reads them
		}
		space, local := "", key
		if colon >= 0 {
			space, local = key[:colon], key[colon+1:]
		}
		d.attrs = append(d.attrs, xml.Attr{Name: xml.Name{Space: space, Local: local}, Value: v})
	}
}

func (d *drawioDecoder) opened(name string) (xmlKind, error) {
	d.depth++
	if d.depth > drawioMaxDepth {
		return 0, d.errorf("elements nest more than %d deep, which draw.io never writes", drawioMaxDepth)
	}
	d.name = name
	return xmlStart, nil
}

// attr is the value of the last start's attribute name (no prefix), or "".
func (d *drawioDecoder) attr(name string) string {
	for i := range d.attrs {
		if d.attrs[i].Name.Local == name && d.attrs[i].Name.Space == "" {
			return d.attrs[i].Value
		}
	}
	return ""
}

// skip reads past the rest of the element whose start was just read. The
// attributes of what it reads past are checked as any others, but not
// kept (a cell's <mxGeometry>, the most of the file's tags after its
// <mxCell>s): d.attrs is empty after it.
func (d *drawioDecoder) skip() error {
	d.skipping = true
	defer func() { d.skipping = false }()
	d.attrs = d.attrs[:0]
	for depth := 1; depth > 0; {
		k, err := d.next()
		if err != nil {
			if err == io.EOF {
				return errors.New("the file ends inside an element")
			}
			return err
		}
		switch k {
		case xmlStart:
			depth++
		case xmlEnd:
			depth--
		}
	}
	return nil
}

func localName(name string) string {
	if c := strings.IndexByte(name, ':'); c >= 0 {
		return name[c+1:]
	}
	return name
}

// allXMLSpace reports whether s is only white space (the indentation
// between elements: a loop, where strings.TrimLeft built its set of bytes
// at each of them).
func allXMLSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isXMLSpace(s[i]) {
			return false
		}
	}
	return true
}

func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// xmlUnescape decodes XML's five entities and character references; any
// other entity is an error (there is no DTD to define one).
func xmlUnescape(s string) (string, error) {
	amp := strings.IndexByte(s, '&')
	if amp < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for amp >= 0 {
		b.WriteString(s[:amp])
		s = s[amp:]
		semi := strings.IndexByte(s, ';')
		if semi < 0 || semi > 12 {
			return "", errors.New("a & that starts no entity (write &amp;)")
		}
		ent := s[1:semi]
		switch ent {
		case "lt":
			b.WriteByte('<')
		case "gt":
			b.WriteByte('>')
		case "amp":
			b.WriteByte('&')
		case "quot":
			b.WriteByte('"')
		case "apos":
			b.WriteByte('\'')
		default:
			if !strings.HasPrefix(ent, "#") {
				return "", fmt.Errorf("the entity &%s; is not XML's (draw.io writes only &lt; &gt; &amp; &quot; and &#…;)", ent)
			}
			var n uint64
			var err error
			if strings.HasPrefix(ent, "#x") {
				n, err = strconv.ParseUint(ent[2:], 16, 32)
			} else {
				n, err = strconv.ParseUint(ent[1:], 10, 32)
			}
			if err != nil || !utf8.ValidRune(rune(n)) || n == 0 {
				return "", fmt.Errorf("the character reference &%s; is not a character", ent)
			}
			b.WriteRune(rune(n))
		}
		s = s[semi+1:]
		amp = strings.IndexByte(s, '&')
	}
	b.WriteString(s)
	return b.String(), nil
}

// aheadReader reads r on its own goroutine, a window ahead of its reader,
// so that reading the file, or inflating a compressed page, runs on the
// second core beside the decoding. Close stops the goroutine and waits
// for it.
type aheadReader struct {
	full, free chan []byte
	stop, done chan struct{}
	buf        []byte // the buffer last given out
	err        error  // set before full is closed
}

func readAhead(r io.Reader, size int) *aheadReader {
	size = max(size, 1)
	a := &aheadReader{full: make(chan []byte, 1), free: make(chan []byte, 2), stop: make(chan struct{}), done: make(chan struct{})}
	a.free <- make([]byte, size)
	a.free <- make([]byte, size)
	go func() {
		defer close(a.done)
		defer close(a.full)
		for {
			var buf []byte
			select {
			case buf = <-a.free:
			case <-a.stop:
				return
			}
			n, err := io.ReadFull(r, buf[:cap(buf)])
			if n > 0 {
				select {
				case a.full <- buf[:n]:
				case <-a.stop:
					return
				}
			}
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			if err != nil {
				a.err = err
				return
			}
		}
	}()
	return a
}

// chunk returns the next bytes read, valid until the next call.
func (a *aheadReader) chunk() ([]byte, error) {
	if a.buf != nil {
		a.free <- a.buf
		a.buf = nil
	}
	b, ok := <-a.full
	if !ok {
		return nil, a.err
	}
	a.buf = b
	return b, nil
}

func (a *aheadReader) Close() {
	close(a.stop)
	<-a.done
}
