// Package configedit sets keys in boxd's YAML configuration file the way
// a person would: where the key is already written as a one-line scalar,
// only that value's bytes change and every comment, blank line and the
// rest of the file stay as they were; a key the file lacks is added (the
// file is then re-encoded from its parsed tree, which keeps the comments
// but not blank lines). WriteFile replaces the file atomically, keeping
// its mode and owner.
package configedit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"boxd/internal/atomicfile"
)

// KV is one setting: a dotted key (models.llm.path) and its string value.
type KV struct{ Key, Value string }

// Set writes every kv into the YAML document src, in order.
func Set(src []byte, kvs ...KV) ([]byte, error) {
	out := src
	for _, kv := range kvs {
		var err error
		if out, err = set(out, kv.Key, kv.Value); err != nil {
			return nil, err
		}
		got, ok, err := Get(out, kv.Key)
		if err != nil || !ok || got != kv.Value {
			return nil, fmt.Errorf("configedit: %s did not take the value (%v)", kv.Key, err)
		}
	}
	return out, nil
}

// Get reads a dotted key's scalar value from src.
func Get(src []byte, key string) (string, bool, error) {
	doc, err := parse(src)
	if err != nil {
		return "", false, err
	}
	if len(doc.Content) == 0 {
		return "", false, nil
	}
	n := doc.Content[0]
	for _, p := range strings.Split(key, ".") {
		if n.Kind != yaml.MappingNode {
			return "", false, nil
		}
		if n = lookup(n, p); n == nil {
			return "", false, nil
		}
	}
	if n.Kind != yaml.ScalarNode {
		return "", false, fmt.Errorf("%s is a group of settings, not a value", key)
	}
	return n.Value, true, nil
}

func parse(src []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("the config file is not valid YAML: %w", err)
	}
	if doc.Kind == 0 { // empty file
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the config file is not a YAML mapping of settings")
	}
	return &doc, nil
}

// lookup is the value node of key in mapping m (nil if absent).
func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func set(src []byte, key, value string) ([]byte, error) {
	doc, err := parse(src)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(key, ".")
	n := doc.Content[0]
	for i, p := range parts {
		v := lookup(n, p)
		if v == nil {
			break
		}
		if i == len(parts)-1 {
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s is a group of settings in the config file, not a value", key)
			}
			if out, ok := splice(src, v, n, value); ok {
				return out, nil
			}
			break
		}
		if v.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s is written as a value in the config file; it is a group of settings", strings.Join(parts[:i+1], "."))
		}
		n = v
	}
	return rewrite(doc, parts, value)
}

// splice replaces the bytes of scalar v (a one-line plain or quoted value
// in a block mapping) with value, double-quoted.
func splice(src []byte, v, parent *yaml.Node, value string) ([]byte, bool) {
	if parent.Style&yaml.FlowStyle != 0 || v.Style&(yaml.TaggedStyle|yaml.LiteralStyle|yaml.FoldedStyle|yaml.FlowStyle) != 0 || v.Line < 1 || v.Column < 1 {
		return nil, false
	}
	if v.Tag == "!!null" && v.Value == "" { // `path:` with nothing after it
		return nil, false
	}
	start := lineStart(src, v.Line)
	if start < 0 {
		return nil, false
	}
	// Column counts characters from 1.
	for c := 1; c < v.Column; c++ {
		if start >= len(src) || src[start] == '\n' {
			return nil, false
		}
		_, w := utf8.DecodeRune(src[start:])
		start += w
	}
	end := -1
	switch {
	case v.Style&yaml.DoubleQuotedStyle != 0:
		end = quotedEnd(src, start, '"')
	case v.Style&yaml.SingleQuotedStyle != 0:
		end = quotedEnd(src, start, '\'')
	case v.Style == 0 && v.Value != "" && !strings.Contains(v.Value, "\n") && bytes.HasPrefix(src[start:], []byte(v.Value)):
		end = start + len(v.Value)
	}
	if end < 0 {
		return nil, false
	}
	var b bytes.Buffer
	b.Write(src[:start])
	b.WriteString(quote(value))
	b.Write(src[end:])
	return b.Bytes(), true
}

// lineStart is the offset of line (1-based) in src, or -1.
func lineStart(src []byte, line int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off
}

// quotedEnd is the offset just past the quoted scalar starting at start,
// or -1 when it does not close on its line.
func quotedEnd(src []byte, start int, q byte) int {
	if start >= len(src) || src[start] != q {
		return -1
	}
	for i := start + 1; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\n':
			return -1
		case q == '"' && c == '\\':
			i++
		case c == q && q == '\'' && i+1 < len(src) && src[i+1] == '\'':
			i++
		case c == q:
			return i + 1
		}
	}
	return -1
}

// quote writes s as a YAML double-quoted scalar (Go's escapes are YAML's).
func quote(s string) string { return strconv.Quote(s) }

// rewrite sets the key in the parsed tree, adding the groups it lacks, and
// encodes the whole document again.
func rewrite(doc *yaml.Node, parts []string, value string) ([]byte, error) {
	n := doc.Content[0]
	for i, p := range parts {
		v := lookup(n, p)
		last := i == len(parts)-1
		if v == nil {
			k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}
			if last {
				v = &yaml.Node{Kind: yaml.ScalarNode}
			} else {
				v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			n.Content = append(n.Content, k, v)
		}
		if last {
			v.Kind, v.Tag, v.Style, v.Value, v.Content, v.Alias = yaml.ScalarNode, "!!str", yaml.DoubleQuotedStyle, value, nil, nil
			break
		}
		if v.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s is written as a value in the config file; it is a group of settings", strings.Join(parts[:i+1], "."))
		}
		n = v
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("configedit: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("configedit: %w", err)
	}
	return b.Bytes(), nil
}

// WriteFile replaces path with data atomically (a temporary file beside
// it, renamed into place), keeping the file's mode and owner; a new file
// gets mode 0640.
func WriteFile(path string, data []byte) error {
	perm := os.FileMode(0o640)
	uid, gid := -1, -1
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && (int(sys.Uid) != os.Getuid() || int(sys.Gid) != os.Getgid()) {
			uid, gid = int(sys.Uid), int(sys.Gid)
		}
	}
	err := atomicfile.WriteFunc(path, perm, func(w io.Writer) error {
		if f, ok := w.(*os.File); ok && uid >= 0 {
			if err := f.Chown(uid, gid); err != nil {
				return fmt.Errorf("keep %s's owner (%d:%d): %w; run as root or as its owner", path, uid, gid, err)
			}
		}
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
