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
	pending xml.Name // the end of a self-closing element, when ended
	ended   bool
	attrs   []xml.Attr // reused: a start's Attr is valid until the next token
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

// token returns the next xml.StartElement, xml.EndElement or xml.CharData
// (comments and the declaration are read past), or io.EOF. A start's Attr
// is reused by the next start: copy it to keep it.
func (d *drawioDecoder) token() (xml.Token, error) {
	if d.ended {
		d.ended = false
		d.depth--
		return xml.EndElement{Name: d.pending}, nil
	}
	for {
		if d.pos >= len(d.s) {
			return nil, io.EOF
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
				return nil, d.errorf("%v", err)
			}
			d.pos += end
			return xml.CharData(text), nil
		}
		rest := d.s[d.pos:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := strings.Index(rest[4:], "-->")
			if end < 0 {
				return nil, d.errorf("a comment is not closed")
			}
			d.pos += 4 + end + 3
			continue
		case strings.HasPrefix(rest, "<![CDATA["):
			end := strings.Index(rest[9:], "]]>")
			if end < 0 {
				return nil, d.errorf("a CDATA section is not closed")
			}
			text := rest[9 : 9+end]
			d.pos += 9 + end + 3
			return xml.CharData(text), nil
		case strings.HasPrefix(rest, "<?"):
			end := strings.Index(rest[2:], "?>")
			if end < 0 {
				return nil, d.errorf("<? is not closed")
			}
			end += 2
			decl := rest[2:end]
			if strings.HasPrefix(decl, "xml") {
				if i := strings.Index(decl, "encoding="); i >= 0 {
					enc, _, _ := strings.Cut(strings.TrimSpace(decl[i+len("encoding="):]), " ")
					enc = strings.Trim(enc, `"'`)
					if !strings.EqualFold(enc, "utf-8") && !strings.EqualFold(enc, "us-ascii") {
						return nil, d.errorf("encoding %q: draw.io writes UTF-8", enc)
					}
				}
			}
			d.pos += end + 2
			continue
		case strings.HasPrefix(rest, "<!"):
			if strings.HasPrefix(rest, "<!DOCTYPE") {
				return nil, d.errorf("it has a DTD (<!DOCTYPE>), which draw.io never writes: refused")
			}
			return nil, d.errorf("<! that is not a comment or CDATA")
		case strings.HasPrefix(rest, "</"):
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return nil, d.errorf("an end tag is not closed")
			}
			name := strings.TrimSpace(rest[2:end])
			if name == "" {
				return nil, d.errorf("an end tag has no name")
			}
			d.pos += end + 1
			if d.depth == 0 {
				return nil, d.errorf("</%s> closes nothing", name)
			}
			d.depth--
			return xml.EndElement{Name: xml.Name{Local: localName(name)}}, nil
		}
		return d.start()
	}
}

// start reads a start tag at d.pos.
func (d *drawioDecoder) start() (xml.Token, error) {
	d.startAt = d.pos
	i := d.pos + 1
	s := d.s
	nameEnd := i
	for nameEnd < len(s) && !isXMLSpace(s[nameEnd]) && s[nameEnd] != '>' && s[nameEnd] != '/' {
		nameEnd++
	}
	if nameEnd == i {
		return nil, d.errorf("< is not followed by a name")
	}
	se := xml.StartElement{Name: xml.Name{Local: localName(s[i:nameEnd])}}
	d.attrs = d.attrs[:0]
	i = nameEnd
	for {
		for i < len(s) && isXMLSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return nil, d.errorf("the tag <%s> is not closed", se.Name.Local)
		}
		switch s[i] {
		case '>':
			d.pos = i + 1
			se.Attr = d.attrs
			return d.opened(se)
		case '/':
			if i+1 >= len(s) || s[i+1] != '>' {
				return nil, d.errorf("a / in the tag <%s>", se.Name.Local)
			}
			d.pos = i + 2
			d.pending, d.ended = se.Name, true
			se.Attr = d.attrs
			return d.opened(se)
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
			return nil, d.errorf("the attribute %q of <%s> has no value", key, se.Name.Local)
		}
		i++
		for i < len(s) && isXMLSpace(s[i]) {
			i++
		}
		if i >= len(s) || s[i] != '"' && s[i] != '\'' {
			return nil, d.errorf("the value of %q in <%s> is not quoted", key, se.Name.Local)
		}
		q := s[i]
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			return nil, d.errorf("the value of %q in <%s> is not closed", key, se.Name.Local)
		}
		raw := s[i+1 : i+1+end]
		if strings.IndexByte(raw, '<') >= 0 {
			d.pos = i
			return nil, d.errorf("a < in the value of %q", key)
		}
		v, err := xmlUnescape(raw)
		if err != nil {
			d.pos = i
			return nil, d.errorf("%v", err)
		}
		space, local := "", key
		if c := strings.IndexByte(key, ':'); c >= 0 {
			space, local = key[:c], key[c+1:]
		}
		d.attrs = append(d.attrs, xml.Attr{Name: xml.Name{Space: space, Local: local}, Value: v})
		i += end + 2
	}
}

func (d *drawioDecoder) opened(se xml.StartElement) (xml.Token, error) {
	d.depth++
	if d.depth > drawioMaxDepth {
		return nil, d.errorf("elements nest more than %d deep, which draw.io never writes", drawioMaxDepth)
	}
	return se, nil
}

// skip reads past the rest of the element whose start was just read.
func (d *drawioDecoder) skip() error {
	for depth := 1; depth > 0; {
		tok, err := d.token()
		if err != nil {
			if err == io.EOF {
				return errors.New("the file ends inside an element")
			}
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
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
