package jsonld

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"boxd/pipelines/sitecheck/pagecheck/text"
)

// MaxJSONDepth is the deepest nesting of arrays and objects ParseJSON accepts.
const MaxJSONDepth = 100

// JSONError is a JSON syntax error: a fixed message, the 1-based line and
// column (in code points) and the byte offset of the offending character.
type JSONError struct {
	Message string `json:"message"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Offset  int    `json:"offset"`
}

func (e *JSONError) Error() string {
	return fmt.Sprintf("%s at line %d, column %d (offset %d)", e.Message, e.Line, e.Column, e.Offset)
}

// ParseJSON parses strict RFC 8259 JSON into map[string]any, []any, string,
// json.Number (the number's text, exact), bool and nil. Duplicate keys keep
// the last value. A lone UTF-16 surrogate escape and an invalid UTF-8 byte
// give U+FFFD. The package documentation lists every error message.
func ParseJSON(s string) (any, *JSONError) {
	p := &jsonParser{s: s}
	p.skipWS()
	v, err := p.value(0)
	if err == nil {
		p.skipWS()
		if p.i < len(p.s) {
			err = p.fail("unexpected " + p.charAt() + " after JSON value")
		}
	}
	if err != nil {
		err.Line, err.Column = lineCol(s, err.Offset)
		return nil, err
	}
	return v, nil
}

// lineCol converts a byte offset into a 1-based line (LF-separated) and a
// 1-based column counted in code points.
func lineCol(s string, off int) (int, int) {
	line := 1 + strings.Count(s[:off], "\n")
	ls := strings.LastIndexByte(s[:off], '\n') + 1
	return line, 1 + utf8.RuneCountInString(s[ls:off])
}

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) fail(msg string) *JSONError { return &JSONError{Message: msg, Offset: p.i} }

func (p *jsonParser) eof() *JSONError { return p.fail("unexpected end of input") }

// charAt renders the character at p.i for messages: 'c', or U+XXXX for
// controls (below U+0020, U+007F-U+009F) and U+FEFF.
func (p *jsonParser) charAt() string {
	r, _ := utf8.DecodeRuneInString(p.s[p.i:])
	if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0xfeff {
		return fmt.Sprintf("U+%04X", r)
	}
	return "'" + string(r) + "'"
}

func (p *jsonParser) skipWS() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, *JSONError) {
	if p.i >= len(p.s) {
		return nil, p.eof()
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.fail("expected value, found " + p.charAt())
}

func (p *jsonParser) literal(word string) *JSONError {
	for k := 0; k < len(word); k++ {
		if p.i >= len(p.s) {
			return p.eof()
		}
		if p.s[p.i] != word[k] {
			return p.fail("invalid literal")
		}
		p.i++
	}
	return nil
}

func (p *jsonParser) object(depth int) (any, *JSONError) {
	if depth > MaxJSONDepth {
		return nil, p.fail("nesting too deep")
	}
	p.i++ // {
	obj := map[string]any{}
	p.skipWS()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return obj, nil
	}
	for {
		if p.i >= len(p.s) {
			return nil, p.eof()
		}
		if p.s[p.i] != '"' {
			return nil, p.fail("expected string key, found " + p.charAt())
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipWS()
		if p.i >= len(p.s) {
			return nil, p.eof()
		}
		if p.s[p.i] != ':' {
			return nil, p.fail("expected ':' after object key, found " + p.charAt())
		}
		p.i++
		p.skipWS()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		obj[k.(string)] = v
		p.skipWS()
		if p.i >= len(p.s) {
			return nil, p.eof()
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.skipWS()
		case '}':
			p.i++
			return obj, nil
		default:
			return nil, p.fail("expected ',' or '}' after object member, found " + p.charAt())
		}
	}
}

func (p *jsonParser) array(depth int) (any, *JSONError) {
	if depth > MaxJSONDepth {
		return nil, p.fail("nesting too deep")
	}
	p.i++ // [
	arr := []any{}
	p.skipWS()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return arr, nil
	}
	for {
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.skipWS()
		if p.i >= len(p.s) {
			return nil, p.eof()
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			p.skipWS()
		case ']':
			p.i++
			return arr, nil
		default:
			return nil, p.fail("expected ',' or ']' after array element, found " + p.charAt())
		}
	}
}

func (p *jsonParser) str() (any, *JSONError) {
	p.i++ // opening quote
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return nil, p.eof()
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return nil, err
			}
			if r >= 0xD800 && r <= 0xDBFF && strings.HasPrefix(p.s[p.i:], `\u`) {
				save := p.i
				r2, err := p.escape()
				if err != nil {
					return nil, err
				}
				if r2 >= 0xDC00 && r2 <= 0xDFFF {
					b.WriteRune(0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00))
					continue
				}
				p.i = save
			}
			if r >= 0xD800 && r <= 0xDFFF {
				r = utf8.RuneError
			}
			b.WriteRune(r)
		case c < 0x20:
			return nil, p.fail("control character in string")
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += size
		}
	}
}

var simpleEscapes = map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape decodes the escape sequence at p.s[p.i] == '\\'.
func (p *jsonParser) escape() (rune, *JSONError) {
	start := p.i
	if p.i+1 >= len(p.s) {
		p.i = len(p.s)
		return 0, p.eof()
	}
	c := p.s[p.i+1]
	if r, ok := simpleEscapes[c]; ok {
		p.i += 2
		return r, nil
	}
	if c != 'u' {
		return 0, &JSONError{Message: "invalid escape sequence", Offset: start}
	}
	v := 0
	for k := 0; k < 4; k++ {
		j := p.i + 2 + k
		if j >= len(p.s) {
			p.i = len(p.s)
			return 0, p.eof()
		}
		d := text.HexDigit(p.s[j])
		if d < 0 {
			return 0, &JSONError{Message: "invalid escape sequence", Offset: start}
		}
		v = v*16 + d
	}
	p.i += 6
	return rune(v), nil
}

func (p *jsonParser) number() (any, *JSONError) {
	start := p.i
	digits := func() *JSONError {
		if p.i >= len(p.s) {
			return p.eof()
		}
		if p.s[p.i] < '0' || p.s[p.i] > '9' {
			return p.fail("invalid number")
		}
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		return nil
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if err := digits(); err != nil {
		return nil, err
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if err := digits(); err != nil {
			return nil, err
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if err := digits(); err != nil {
			return nil, err
		}
	}
	return json.Number(p.s[start:p.i]), nil
}
