// Package schema builds bounded JSON schemas for model answers, and the
// most tokens such an answer can take.
//
// Every structured model answer is constrained by a grammar that llama.cpp
// builds from its JSON schema. The nodes built here bound every string
// (maxLength, and a pattern whose matches need no JSON escape, so no
// character becomes many bytes: printable ASCII without " or \, or, with
// UText, any character of the Basic Multilingual Plane but " \ and
// controls) and every array (maxItems); every object has fixed, required
// properties and no others. Each node also carries the most bytes the
// grammar lets a model write for a value under it, whitespace included
// (llama.cpp's space rule after each literal is counted at its longest,
// Space bytes). Since every token the grammar accepts is at least one
// byte, an answer whose MaxTokens is Lane's bound always finishes, even
// with a random-weight model.
//
// Build a node from the leaves (Text, Pattern, Enum, Cite, LabeledCite,
// UText) with Array, ExactArray and Object, and turn the root into a
// schema and its MaxTokens with Lane.
package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Space is the most bytes llama.cpp's space rule allows after each
// literal: "" | " " | "\n"{1,2} [ \t]{0,20}.
const Space = 22

// Node is one schema node: its JSON (keys in a fixed order, which is the
// order the grammar makes the model write them) and the most bytes of a
// value under it, trailing whitespace included.
type Node struct {
	raw string
	max int
}

// JSON is the node's schema.
func (n Node) JSON() json.RawMessage { return json.RawMessage(n.raw) }

// MaxBytes is the most bytes the grammar lets a model write for a value
// under the node, trailing whitespace included.
func (n Node) MaxBytes() int { return n.max }

// Property is one property of an Object: its name and its node.
type Property struct {
	name string
	node Node
}

// Prop is the property name whose value is node.
func Prop(name string, node Node) Property { return Property{name: name, node: node} }

// Text is a string of at most n printable ASCII characters without " or
// \ (no escapes, no line breaks).
func Text(n int) Node {
	return Pattern(`[ !#-\[\]-~]{0,`+strconv.Itoa(n)+`}`, n)
}

// Pattern is a string matching ^re$; the caller vouches that its matches
// are at most n bytes long and need no JSON escapes.
func Pattern(re string, n int) Node {
	p, _ := json.Marshal("^" + re + "$")
	return Node{raw: fmt.Sprintf(`{"type":"string","maxLength":%d,"pattern":%s}`, n, p), max: 1 + n + 1 + Space}
}

// UText is a string of at most n characters of any script: no " or \, no
// control characters and nothing outside the Basic Multilingual Plane (no
// emoji), so no escapes and at most 3 bytes a character.
func UText(n int) Node {
	node := Pattern(`[^"\\\x00-\x1F\x7F\U00010000-\U0010FFFF]{0,`+strconv.Itoa(n)+`}`, n)
	node.max = 1 + 3*n + 1 + Space
	return node
}

// Cite is a citation of numbered lines: "[n] words" or "[n,m] words" (n
// and m up to 4 digits), the words 1 to q printable ASCII characters
// without " or \ (package cite reads it).
func Cite(q int) Node {
	return Pattern(`\[[0-9]{1,4}(,[0-9]{1,4})?\] [ !#-\[\]-~]{1,`+strconv.Itoa(q)+`}`, 12+q)
}

// LabeledCite is "[n] label: words" (or "[n,m] label: words"): a label of
// 1 to label characters without a colon, then 1 to q characters of words.
func LabeledCite(label, q int) Node {
	return Pattern(`\[[0-9]{1,4}(,[0-9]{1,4})?\] [ !#-9;-\[\]-~]{1,`+strconv.Itoa(label)+`}: [ !#-\[\]-~]{1,`+strconv.Itoa(q)+`}`, 12+label+2+q)
}

// Enum is one of the given strings.
func Enum(vals ...string) Node {
	b, _ := json.Marshal(vals)
	longest := 0
	for _, v := range vals {
		q, _ := json.Marshal(v)
		longest = max(longest, len(q))
	}
	return Node{raw: fmt.Sprintf(`{"type":"string","enum":%s}`, b), max: longest + Space}
}

// Array is at most n items.
func Array(item Node, n int) Node {
	// "[" space ( item ("," space item){0,n-1} )? "]" space
	return Node{raw: fmt.Sprintf(`{"type":"array","maxItems":%d,"items":%s}`, n, item.raw),
		max: 1 + Space + n*item.max + (n-1)*(1+Space) + 1 + Space}
}

// ExactArray is an array of exactly n items (its longest answer is
// Array's).
func ExactArray(item Node, n int) Node {
	a := Array(item, n)
	a.raw = fmt.Sprintf(`{"type":"array","minItems":%d,"maxItems":%d,"items":%s}`, n, n, item.raw)
	return a
}

// Object has exactly these properties, all required, in this order.
func Object(props ...Property) Node {
	var b strings.Builder
	b.WriteString(`{"type":"object","additionalProperties":false,"properties":{`)
	names := make([]string, len(props))
	size := 1 + Space + 1 + Space // "{" space ... "}" space
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
			size += 1 + Space
		}
		k, _ := json.Marshal(p.name)
		fmt.Fprintf(&b, "%s:%s", k, p.node.raw)
		names[i] = string(k)
		// "\"key\"" space ":" space value
		size += len(k) + Space + 1 + Space + p.node.max
	}
	fmt.Fprintf(&b, `},"required":[%s]}`, strings.Join(names, ","))
	return Node{raw: b.String(), max: size}
}

// Lane is the schema of an answer whose root is root, and the MaxTokens
// that always fits it (one more token for the end of generation).
func Lane(root Node) (json.RawMessage, int) {
	return json.RawMessage(root.raw), root.max + 1
}
