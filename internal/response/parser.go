package response

// maxDepth is encoding/json's nesting limit: json.Valid rejects a value
// with more open objects and arrays than this.
const maxDepth = 10000

// mode is where a parser is in the JSON grammar.
type mode uint8

const (
	mObjOpen  mode = iota // after '{': a key or '}'
	mObjKey               // after ',' in an object: a key
	mColon                // after a key: ':'
	mValue                // after ':' or ',' in an array: a value
	mArrOpen              // after '[': a value or ']'
	mAfter                // after a value: ',' or the closing bracket
	mLit                  // inside true, false or null
	mNumMinus             // after '-': a digit
	mNumZero              // after a leading 0
	mNumInt               // in the integer digits
	mNumDot               // after '.': a digit
	mNumFrac              // in the fraction digits
	mNumE                 // after 'e': a sign or digit
	mNumESign             // after the exponent's sign: a digit
	mNumExp               // in the exponent digits
	mStr                  // in a string
	mStrEsc               // after a backslash in a string
	mStrHex               // in a \u escape
)

// frame is one open object or array.
type frame struct {
	start int // offset of its '{' or '['
	obj   bool
}

// parser follows one candidate object, and every object nested in it, byte
// by byte. stack[bottom] is always an object: the candidate.
type parser struct {
	stack  []frame // open containers from stack[bottom] up
	bottom int
	mode   mode
	key    bool   // the string being read is an object key
	lit    string // the rest of the literal being read
	hexes  int    // hex digits still due in a \u escape
}

func (p *parser) begin(start int) {
	p.stack = append(p.stack[:0], frame{start, true})
	p.bottom = 0
	p.mode = mObjOpen
}

// depth is how many objects and arrays are open.
func (p *parser) depth() int { return len(p.stack) - p.bottom }

// step feeds the byte at offset i to the parser. found is told of each
// object that closes. It reports whether the parser is still alive: false
// when c breaks the grammar or the candidate object is complete.
func (p *parser) step(c byte, i int, found func(start, end int)) bool {
	switch p.mode {
	case mStr:
		switch {
		case c == '"':
			if p.key {
				p.mode = mColon
			} else {
				p.mode = mAfter
			}
		case c == '\\':
			p.mode = mStrEsc
		case c < 0x20:
			return false
		}
		return true
	case mStrEsc:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p.mode = mStr
		case 'u':
			p.mode, p.hexes = mStrHex, 4
		default:
			return false
		}
		return true
	case mStrHex:
		if !isHex(c) {
			return false
		}
		if p.hexes--; p.hexes == 0 {
			p.mode = mStr
		}
		return true
	case mLit:
		if c != p.lit[0] {
			return false
		}
		if p.lit = p.lit[1:]; p.lit == "" {
			p.mode = mAfter
		}
		return true
	case mNumMinus:
		return p.numDigit(c, mNumZero, mNumInt)
	case mNumDot:
		return p.numDigit(c, mNumFrac, mNumFrac)
	case mNumESign:
		return p.numDigit(c, mNumExp, mNumExp)
	case mNumE:
		if c == '+' || c == '-' {
			p.mode = mNumESign
			return true
		}
		return p.numDigit(c, mNumExp, mNumExp)
	case mNumZero, mNumInt, mNumFrac, mNumExp:
		switch {
		case isDigit(c) && p.mode != mNumZero:
			return true
		case c == '.' && (p.mode == mNumZero || p.mode == mNumInt):
			p.mode = mNumDot
			return true
		case (c == 'e' || c == 'E') && p.mode != mNumExp:
			p.mode = mNumE
			return true
		}
		p.mode = mAfter // the number ended; c belongs to what follows
	}
	if isSpace(c) {
		return true
	}
	switch p.mode {
	case mObjOpen, mObjKey:
		switch {
		case c == '"':
			p.mode, p.key = mStr, true
			return true
		case c == '}' && p.mode == mObjOpen:
			return p.close(i, found)
		}
		return false
	case mColon:
		if c != ':' {
			return false
		}
		p.mode = mValue
		return true
	case mValue, mArrOpen:
		if c == ']' && p.mode == mArrOpen {
			return p.close(i, found)
		}
		return p.value(c, i)
	case mAfter:
		top := p.stack[len(p.stack)-1]
		switch {
		case c == ',' && top.obj:
			p.mode = mObjKey
			return true
		case c == ',':
			p.mode = mValue
			return true
		case c == '}' && top.obj, c == ']' && !top.obj:
			return p.close(i, found)
		}
	}
	return false
}

// value starts the value that c begins.
func (p *parser) value(c byte, i int) bool {
	switch c {
	case '{':
		return p.push(frame{i, true}, mObjOpen)
	case '[':
		return p.push(frame{i, false}, mArrOpen)
	case '"':
		p.mode, p.key = mStr, false
	case 't':
		p.mode, p.lit = mLit, "rue"
	case 'f':
		p.mode, p.lit = mLit, "alse"
	case 'n':
		p.mode, p.lit = mLit, "ull"
	case '-':
		p.mode = mNumMinus
	case '0':
		p.mode = mNumZero
	default:
		if c < '1' || c > '9' {
			return false
		}
		p.mode = mNumInt
	}
	return true
}

// numDigit moves on to zero after a '0' or to digits after 1-9, if c is a
// digit at all.
func (p *parser) numDigit(c byte, zero, digits mode) bool {
	switch {
	case c == '0':
		p.mode = zero
	case c >= '1' && c <= '9':
		p.mode = digits
	default:
		return false
	}
	return true
}

// push opens an object or array. Past encoding/json's depth limit the
// candidate at the bottom becomes invalid, but the objects nested in it are
// still candidates of their own, shallower by one: it gives up the bottom
// frame, and any arrays under the next object, and goes on as the parser
// of that object.
func (p *parser) push(f frame, m mode) bool {
	p.stack = append(p.stack, f)
	p.mode = m
	if p.depth() <= maxDepth {
		return true
	}
	p.bottom++
	for p.bottom < len(p.stack) && !p.stack[p.bottom].obj {
		p.bottom++
	}
	if p.bottom == len(p.stack) {
		return false // no object left to follow
	}
	if p.bottom > maxDepth {
		// Reuse the space below the bottom, in amortised constant time.
		p.stack = p.stack[:copy(p.stack, p.stack[p.bottom:])]
		p.bottom = 0
	}
	return true
}

// close ends the innermost object or array at offset i.
func (p *parser) close(i int, found func(start, end int)) bool {
	top := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	if top.obj {
		found(top.start, i+1)
	}
	p.mode = mAfter
	return p.depth() > 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
