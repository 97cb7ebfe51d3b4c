package text

import "strings"

// TokenKind is the kind of a Token produced by Scan.
type TokenKind int

// The token kinds.
const (
	// TokText is character data between tags (not entity-decoded).
	TokText TokenKind = iota
	// TokStartTag is "<name attr=value ...>".
	TokStartTag
	// TokEndTag is "</name ...>".
	TokEndTag
	// TokComment is "<!-- ... -->"; Content is the text between the markers.
	TokComment
	// TokBogus is "<!...>" (doctype, CDATA, ...) or "<?...>" or "</" not
	// followed by a letter: skipped markup.
	TokBogus
	// TokRawText is the content of a raw text element (script, style,
	// textarea, title) up to its end tag; it always follows the start tag.
	TokRawText
)

// Attr is one attribute of a start tag: lower-case name, entity-decoded value.
type Attr struct {
	Name  string
	Value string
}

// Token is one piece of scanned HTML. Start and End are byte offsets of the
// whole token in the scanned string; for TokComment and TokRawText,
// ContentStart and ContentEnd delimit the content (for other kinds they equal
// Start and End).
type Token struct {
	Kind         TokenKind
	Name         string // lower-case tag name (start and end tags)
	Attrs        []Attr // start tags only, in source order, first of duplicates kept
	Start, End   int
	ContentStart int
	ContentEnd   int
}

// Attr returns the value of the named attribute (name in lower case) and
// whether it is present.
func (t Token) Attr(name string) (string, bool) {
	for _, a := range t.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return "", false
}

// rawTextElements hold their content as raw text up to their end tag.
var rawTextElements = map[string]bool{"script": true, "style": true, "textarea": true, "title": true}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// IsHTMLSpace reports the HTML whitespace bytes: tab, LF, FF, CR, space.
func IsHTMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// Scan splits HTML into tokens. It is a small, forgiving scanner, not an
// HTML5 parser; the package documentation describes its exact rules.
func Scan(s string) []Token {
	var toks []Token
	i := 0
	n := len(s)
	textStart := 0
	flush := func(end int) {
		if end > textStart {
			toks = append(toks, Token{Kind: TokText, Start: textStart, End: end, ContentStart: textStart, ContentEnd: end})
		}
	}
	for i < n {
		if s[i] != '<' || i+1 >= n {
			i++
			continue
		}
		c := s[i+1]
		switch {
		case c == '!' && strings.HasPrefix(s[i:], "<!--"):
			flush(i)
			cs := i + 4
			var ce, end int
			switch {
			case strings.HasPrefix(s[cs:], ">"):
				ce, end = cs, cs+1
			case strings.HasPrefix(s[cs:], "->"):
				ce, end = cs, cs+2
			default:
				k := strings.Index(s[cs:], "-->")
				if k < 0 {
					ce, end = n, n
				} else {
					ce, end = cs+k, cs+k+3
				}
			}
			toks = append(toks, Token{Kind: TokComment, Start: i, End: end, ContentStart: cs, ContentEnd: ce})
			i, textStart = end, end
		case c == '!' || c == '?' || (c == '/' && (i+2 >= n || !isASCIILetter(s[i+2]))):
			flush(i)
			end := n
			if k := strings.IndexByte(s[i+2:], '>'); k >= 0 {
				end = i + 2 + k + 1
			}
			toks = append(toks, Token{Kind: TokBogus, Start: i, End: end, ContentStart: i, ContentEnd: end})
			i, textStart = end, end
		case c == '/':
			flush(i)
			j := i + 2
			for j < n && !IsHTMLSpace(s[j]) && s[j] != '/' && s[j] != '>' {
				j++
			}
			name := ASCIILower(s[i+2 : j])
			k := strings.IndexByte(s[j:], '>')
			if k < 0 {
				// An unterminated end tag swallows the rest of the input.
				return toks
			}
			end := j + k + 1
			toks = append(toks, Token{Kind: TokEndTag, Name: name, Start: i, End: end, ContentStart: i, ContentEnd: end})
			i, textStart = end, end
		case isASCIILetter(c):
			flush(i)
			tok, ok := scanStartTag(s, i)
			if !ok {
				// An unterminated start tag swallows the rest of the input.
				return toks
			}
			toks = append(toks, tok)
			i, textStart = tok.End, tok.End
			if rawTextElements[tok.Name] {
				cs := i
				ce, end := findRawEnd(s, cs, tok.Name)
				toks = append(toks, Token{Kind: TokRawText, Name: tok.Name, Start: cs, End: ce, ContentStart: cs, ContentEnd: ce})
				if ce < n {
					toks = append(toks, Token{Kind: TokEndTag, Name: tok.Name, Start: ce, End: end, ContentStart: ce, ContentEnd: end})
				}
				i, textStart = end, end
			}
		default:
			i++
		}
	}
	flush(n)
	return toks
}

// findRawEnd finds the end tag of a raw text element: the first "</" + name
// (ASCII case-insensitive) followed by a space, "/", ">" or the end of the
// input. It returns the content end and the offset after the end tag's ">"
// (the input length when it has none); without an end tag both are len(s).
func findRawEnd(s string, from int, name string) (contentEnd, end int) {
	n := len(s)
	for i := from; i+1 < n; i++ {
		if s[i] != '<' || s[i+1] != '/' {
			continue
		}
		j := i + 2
		if j+len(name) > n || ASCIILower(s[j:j+len(name)]) != name {
			continue
		}
		j += len(name)
		if j < n && !IsHTMLSpace(s[j]) && s[j] != '/' && s[j] != '>' {
			continue
		}
		k := strings.IndexByte(s[j:], '>')
		if k < 0 {
			return i, n
		}
		return i, j + k + 1
	}
	return n, n
}

// scanStartTag scans the start tag at s[i] == '<' (followed by a letter).
// ok is false when the input ends before the closing '>'.
func scanStartTag(s string, i int) (Token, bool) {
	n := len(s)
	j := i + 1
	for j < n && !IsHTMLSpace(s[j]) && s[j] != '/' && s[j] != '>' {
		j++
	}
	tok := Token{Kind: TokStartTag, Name: ASCIILower(s[i+1 : j]), Start: i}
	var seen map[string]bool // attribute names, once a tag has many
	for {
		for j < n && (IsHTMLSpace(s[j]) || s[j] == '/') {
			j++
		}
		if j >= n {
			return Token{}, false
		}
		if s[j] == '>' {
			j++
			tok.End, tok.ContentStart, tok.ContentEnd = j, i, j
			return tok, true
		}
		if s[j] == '=' {
			// An attribute name cannot start with '='; skip it.
			j++
			continue
		}
		ns := j
		for j < n && !IsHTMLSpace(s[j]) && s[j] != '/' && s[j] != '>' && s[j] != '=' {
			j++
		}
		name := ASCIILower(s[ns:j])
		k := j
		for k < n && IsHTMLSpace(s[k]) {
			k++
		}
		value := ""
		if k < n && s[k] == '=' {
			k++
			for k < n && IsHTMLSpace(s[k]) {
				k++
			}
			if k >= n {
				return Token{}, false
			}
			if q := s[k]; q == '"' || q == '\'' {
				e := strings.IndexByte(s[k+1:], q)
				if e < 0 {
					return Token{}, false
				}
				value = s[k+1 : k+1+e]
				k = k + 1 + e + 1
			} else {
				vs := k
				for k < n && !IsHTMLSpace(s[k]) && s[k] != '>' {
					k++
				}
				value = s[vs:k]
			}
			j = k
		}
		// Keep the first of duplicate attributes. A map takes over from the
		// linear search on tags with many attributes, so that a huge tag
		// does not take quadratic time.
		var dup bool
		if seen != nil {
			dup = seen[name]
		} else {
			_, dup = tok.Attr(name)
			if !dup && len(tok.Attrs) >= 16 {
				seen = make(map[string]bool, 2*len(tok.Attrs))
				for _, a := range tok.Attrs {
					seen[a.Name] = true
				}
			}
		}
		if !dup {
			tok.Attrs = append(tok.Attrs, Attr{Name: name, Value: DecodeEntities(value)})
			if seen != nil {
				seen[name] = true
			}
		}
	}
}
