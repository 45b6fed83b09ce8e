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
// slices names and values out of the input, copying only those with
// entities. A <!DOCTYPE> (and so any entity but XML's five and character
// references) is refused, nesting is capped at drawioMaxDepth, and every
// byte is looked at a bounded number of times.
type drawioDecoder struct {
	s       string
	pos     int
	depth   int
	pending string // the end of a self-closing element, when ended
	ended   bool
	// The token read last: a start's or an end's local name, a start's
	// attributes (reused: valid until the next token), a text's text.
	name  string
	attrs []xml.Attr
	text  string
	// line is the line of lineAt in s; start is where the last start tag
	// began. line counts on from lineAt, so all the counting is linear.
	line, lineAt, startAt int
}

// startLine is the line of the last start tag read.
func (d *drawioDecoder) startLine() int {
	if d.line == 0 {
		d.line = 1
	}
	if d.startAt > d.lineAt {
		d.line += strings.Count(d.s[d.lineAt:d.startAt], "\n")
		d.lineAt = d.startAt
	}
	return d.line
}

func newDrawioDecoder(s string) *drawioDecoder {
	return &drawioDecoder{s: strings.TrimPrefix(s, "\ufeff")}
}

func (d *drawioDecoder) errorf(format string, args ...any) error {
	line := 1 + strings.Count(d.s[:min(d.pos, len(d.s))], "\n")
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

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
				end = len(d.s) - d.pos
			}
			raw := d.s[d.pos : d.pos+end]
			if strings.TrimLeft(raw, " \t\r\n") == "" {
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
		k := i
		for i < len(s) && s[i] != '=' && !isXMLSpace(s[i]) && s[i] != '>' && s[i] != '/' {
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
		space, local := "", key
		if c := strings.IndexByte(key, ':'); c >= 0 {
			space, local = key[:c], key[c+1:]
		}
		d.attrs = append(d.attrs, xml.Attr{Name: xml.Name{Space: space, Local: local}, Value: v})
		i += end + 2
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

// skip reads past the rest of the element whose start was just read.
func (d *drawioDecoder) skip() error {
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
