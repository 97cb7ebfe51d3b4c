package retrieval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"boxd/internal/problem"
)

// Text the routes refuse rather than index or search (400 naming the
// field): encoding/json reads a string whose bytes are not UTF-8, or
// whose \u escapes are a lone surrogate, as U+FFFD without a word, so the
// box would index (and sign hashes of) text the caller never sent; an
// empty document has nothing to search; NUL, which C libraries (the
// embedder's tokenizer) read as the string's end, has no place in an id,
// a title, a query or a document. Control characters have none in an id.
//
// Document, ScanDocument, SearchRequest and QuotesRequest decode
// themselves to see the
// JSON of their strings; their fields are read as before (unknown ones
// refused), and their shapes are given to strictjson (StrictShape) so that keys twice
// or in the wrong case are still refused.

type plainDocument Document

type plainSearch SearchRequest

type plainQuotes QuotesRequest

type plainScanDocument ScanDocument

// StrictShape gives strictjson a Document's keys (strictjson.Shaped).
func (Document) StrictShape() any { return plainDocument{} }

// StrictShape gives strictjson a SearchRequest's keys.
func (SearchRequest) StrictShape() any { return plainSearch{} }

// StrictShape gives strictjson a QuotesRequest's keys.
func (QuotesRequest) StrictShape() any { return plainQuotes{} }

// StrictShape gives strictjson a ScanDocument's keys.
func (ScanDocument) StrictShape() any { return plainScanDocument{} }

// UnmarshalJSON reads a scan's entry, noting its name when it was not
// UTF-8.
func (d *ScanDocument) UnmarshalJSON(b []byte) error {
	var p plainScanDocument
	bad, err := decodeNoting(b, &p, "name")
	if err != nil {
		return err
	}
	*d = ScanDocument(p)
	d.notUTF8 = bad
	return nil
}

// UnmarshalJSON reads a document, noting its strings that were not UTF-8.
func (d *Document) UnmarshalJSON(b []byte) error {
	var p plainDocument
	bad, err := decodeNoting(b, &p, "id", "title", "text")
	if err != nil {
		return err
	}
	*d = Document(p)
	d.notUTF8 = bad
	return nil
}

// UnmarshalJSON reads a search body, noting its query when it was not
// UTF-8.
func (r *SearchRequest) UnmarshalJSON(b []byte) error {
	var p plainSearch
	bad, err := decodeNoting(b, &p, "index", "query", "mode")
	if err != nil {
		return err
	}
	*r = SearchRequest(p)
	r.notUTF8 = bad
	return nil
}

// UnmarshalJSON reads a quotes body, noting its strings that were not
// UTF-8.
func (r *QuotesRequest) UnmarshalJSON(b []byte) error {
	var p plainQuotes
	bad, err := decodeNoting(b, &p, "index", "query", "chunks", "answer", "quotes")
	if err != nil {
		return err
	}
	*r = QuotesRequest(p)
	r.notUTF8 = bad
	return nil
}

// decodeNoting decodes the JSON object b into dst refusing unknown fields,
// and returns which of fields (strings, or lists of strings: "quotes[2]")
// were sent as something other than UTF-8.
func decodeNoting(b []byte, dst any, fields ...string) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return nil, err
	}
	if utf8.Valid(b) && !bytes.Contains(b, []byte(`\u`)) {
		return nil, nil // nothing to look at: the common case
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	var bad []string
	for _, f := range fields {
		v := bytes.TrimSpace(raw[f])
		switch {
		case len(v) > 0 && v[0] == '"':
			if !cleanString(v) {
				bad = append(bad, f)
			}
		case len(v) > 0 && v[0] == '[':
			var items []json.RawMessage
			if json.Unmarshal(v, &items) == nil {
				for i, it := range items {
					if it = bytes.TrimSpace(it); len(it) > 0 && it[0] == '"' && !cleanString(it) {
						bad = append(bad, f+"["+strconv.Itoa(i)+"]")
					}
				}
			}
		}
	}
	return bad, nil
}

// cleanString reports whether the JSON string token s is UTF-8 and has no
// \u escape of a lone surrogate.
func cleanString(s []byte) bool {
	if !utf8.Valid(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++
		if i >= len(s) || s[i] != 'u' || i+4 >= len(s) {
			continue
		}
		r, err := strconv.ParseUint(string(s[i+1:i+5]), 16, 32)
		if err != nil {
			continue
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low surrogate alone
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
				return false
			}
			lo, err := strconv.ParseUint(string(s[i+3:i+7]), 16, 32)
			if err != nil || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

// notUTF8Problem is the refusal of the first field noted, named from
// prefix ("documents[3]." or "").
func notUTF8Problem(prefix string, fields []string) error {
	if len(fields) == 0 {
		return nil
	}
	return problem.New(problem.Invalid, "%s%s is not valid UTF-8 (bytes that are not UTF-8, or a \\u escape of a lone surrogate): send the text as UTF-8", prefix, fields[0])
}

// checkText refuses a NUL in text (and, when id is set, any control
// character), naming field.
func checkText(field, text string, id bool) error {
	for i, r := range text {
		switch {
		case r == 0:
			return problem.New(problem.Invalid, "%s holds a NUL character at byte %d: remove it", field, i)
		case id && unicode.Is(unicode.Cc, r):
			return problem.New(problem.Invalid, "%s holds the control character U+%04X at byte %d: ids are printable text", field, r, i)
		}
	}
	return nil
}

// checkDocument applies the text rules to the document at index i.
func checkDocument(i int, d Document) error {
	at := fmt.Sprintf("documents[%d].", i)
	if err := notUTF8Problem(at, d.notUTF8); err != nil {
		return err
	}
	if strings.TrimSpace(d.Text) == "" {
		return problem.New(problem.Invalid, "%stext is empty: send the document's text (an empty document has nothing to search)", at)
	}
	for _, f := range []struct {
		name, text string
		id         bool
	}{{"id", d.ID, true}, {"title", d.Title, false}, {"text", d.Text, false}} {
		if err := checkText(at+f.name, f.text, f.id); err != nil {
			return err
		}
	}
	return nil
}
