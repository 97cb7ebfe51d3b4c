// Package attest holds the box's trust primitives: canonical JSON (the byte
// form every hash and signature covers), the instance key, the signed
// envelope the document, chart and search receipts are written in
// (Signed), model-call receipts and signed records.
package attest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Canonical returns the canonical JSON of v: object keys sorted by their
// UTF-8 bytes, no whitespace, separators "," and ":", non-ASCII characters
// written as UTF-8 (not escaped), and only the escapes JSON requires.
// Numbers keep the exact text encoding/json produced for them; records that
// are signed carry numbers as strings (see docs/decisions.md).
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	var buf bytes.Buffer
	if err := writeCanonical(&buf, tree); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// CanonicalJSON re-encodes JSON text canonically (see Canonical). The
// input must be exactly one JSON value.
func CanonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if !onlySpaceLeft(dec) {
		return nil, fmt.Errorf("canonical json: data after the value")
	}
	var buf bytes.Buffer
	if err := writeCanonical(&buf, tree); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// onlySpaceLeft reports whether the decoder's remaining input is only
// JSON whitespace.
func onlySpaceLeft(dec *json.Decoder) bool {
	rest, _ := io.ReadAll(dec.Buffered())
	if len(bytes.Trim(rest, " \t\r\n")) > 0 {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF
}

func writeCanonical(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case json.Number:
		buf.WriteString(v.String())
	case string:
		writeString(buf, v)
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // Go strings compare by bytes: UTF-8 order
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeCanonical(buf, v[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("canonical json: unexpected %T", v)
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			buf.WriteString(`\"`)
		case r == '\\':
			buf.WriteString(`\\`)
		case r == '\n':
			buf.WriteString(`\n`)
		case r == '\r':
			buf.WriteString(`\r`)
		case r == '\t':
			buf.WriteString(`\t`)
		case r == '\b':
			buf.WriteString(`\b`)
		case r == '\f':
			buf.WriteString(`\f`)
		case r < 0x20:
			buf.WriteString(`\u00`)
			buf.WriteByte(hex[r>>4])
			buf.WriteByte(hex[r&0xf])
		case r == utf8.RuneError:
			buf.WriteString("\ufffd")
		default:
			buf.WriteRune(r)
		}
	}
	buf.WriteByte('"')
}
