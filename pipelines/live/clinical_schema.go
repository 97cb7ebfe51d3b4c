package live

// Schema building and shared helpers for the clinical and sales lanes.
//
// Every lane answer is constrained by a grammar that llama.cpp builds from
// its JSON schema. Each schema here bounds every string (maxLength, and a
// pattern of printable ASCII without " or \, so no escape can make one
// character many bytes) and every array (maxItems), and every object has
// fixed, required properties. The builder computes the most bytes the
// grammar lets a model write, whitespace included; since every token the
// grammar accepts is at least one byte, a lane whose MaxTokens is that
// bound always finishes, even with a random-weight model.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// schSpace is the most bytes llama.cpp's space rule allows after each
// literal: "" | " " | "\n"{1,2} [ \t]{0,20}.
const schSpace = 22

// schNode is one schema node: its JSON (keys in a fixed order, which is the
// order the grammar makes the model write them) and the most bytes of a
// value under it, trailing whitespace included.
type schNode struct {
	raw string
	max int
}

type schProp struct {
	name string
	node schNode
}

// schText is a string of at most n printable ASCII characters without " or
// \ (no escapes, no line breaks).
func schText(n int) schNode {
	return schPattern(`[ !#-\[\]-~]{0,`+strconv.Itoa(n)+`}`, n)
}

// schPattern is a string matching ^re$, whose matches are at most n bytes
// long and need no JSON escapes.
func schPattern(re string, n int) schNode {
	p, _ := json.Marshal("^" + re + "$")
	return schNode{raw: fmt.Sprintf(`{"type":"string","maxLength":%d,"pattern":%s}`, n, p), max: 1 + n + 1 + schSpace}
}

// schEnum is one of the given strings.
func schEnum(vals ...string) schNode {
	b, _ := json.Marshal(vals)
	longest := 0
	for _, v := range vals {
		q, _ := json.Marshal(v)
		longest = max(longest, len(q))
	}
	return schNode{raw: fmt.Sprintf(`{"type":"string","enum":%s}`, b), max: longest + schSpace}
}

// schArray is at most n items.
func schArray(item schNode, n int) schNode {
	// "[" space ( item ("," space item){0,n-1} )? "]" space
	return schNode{raw: fmt.Sprintf(`{"type":"array","maxItems":%d,"items":%s}`, n, item.raw),
		max: 1 + schSpace + n*item.max + (n-1)*(1+schSpace) + 1 + schSpace}
}

// schExactArray is an array of exactly n items (its longest answer is
// schArray's).
func schExactArray(item schNode, n int) schNode {
	a := schArray(item, n)
	a.raw = fmt.Sprintf(`{"type":"array","minItems":%d,"maxItems":%d,"items":%s}`, n, n, item.raw)
	return a
}

// schObject has exactly these properties, all required, in this order.
func schObject(props ...schProp) schNode {
	var b strings.Builder
	b.WriteString(`{"type":"object","additionalProperties":false,"properties":{`)
	names := make([]string, len(props))
	size := 1 + schSpace + 1 + schSpace // "{" space ... "}" space
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
			size += 1 + schSpace
		}
		k, _ := json.Marshal(p.name)
		fmt.Fprintf(&b, "%s:%s", k, p.node.raw)
		names[i] = string(k)
		// "\"key\"" space ":" space value
		size += len(k) + schSpace + 1 + schSpace + p.node.max
	}
	fmt.Fprintf(&b, `},"required":[%s]}`, strings.Join(names, ","))
	return schNode{raw: b.String(), max: size}
}

// laneSchema is a lane's schema and the MaxTokens that always fits its
// answer (one more token for the end of generation).
func laneSchema(root schNode) (json.RawMessage, int) {
	return json.RawMessage(root.raw), root.max + 1
}

// promptTranscriptChars bounds the transcript in a prompt (about 4,000
// tokens), so prompt and answer fit an 8,192-token context.
const promptTranscriptChars = 16000

// numberedTranscript is the transcript as numbered lines ([n] text), the
// latest lines when it is longer than promptTranscriptChars, or "" when
// nothing has been said yet.
func numberedTranscript(st *State) string {
	lines := strings.SplitAfter(st.Lines(), "\n")
	total, first := 0, len(lines)
	for first > 0 && total+len(lines[first-1]) <= promptTranscriptChars {
		first--
		total += len(lines[first])
	}
	text := strings.Join(lines[first:], "")
	if strings.TrimSpace(text) == "" {
		return ""
	}
	if first > 0 {
		text = fmt.Sprintf("[lines 1 to %d are left out: the transcript is longer than a prompt holds]\n", first) + text
	}
	return text
}

// cleanText trims a model string; strings are single-line ASCII by schema.
func cleanText(s string) string { return strings.Join(strings.Fields(s), " ") }

// cleanList trims each string and drops empty ones; never nil.
func cleanList(in []string) []string {
	out := []string{}
	for _, s := range in {
		if s = cleanText(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// orNull is nil for "" (a field not mentioned yet), else the string.
func orNull(s string) *string {
	if s = cleanText(s); s == "" {
		return nil
	}
	return &s
}

// FinalTranscriptLine is one line of final_transcript (contract section
// 2). Without diarization the lines are the live transcript's: speaker and
// role null; end null, since the live transcript keeps only when each
// sentence starts.
type FinalTranscriptLine struct {
	N       int      `json:"n"`
	Speaker *string  `json:"speaker"`
	Role    *string  `json:"role"`
	Start   float64  `json:"start"`
	End     *float64 `json:"end"`
	Text    string   `json:"text"`
}

// FinalTranscript is the final_transcript lane's data and summary entry:
// {lines, roles, model, audio_s, diarize_s}. Without a diarization model
// roles is {} (no speaker to map), model and diarize_s null.
type FinalTranscript struct {
	Lines    []FinalTranscriptLine `json:"lines"`
	Roles    map[string]string     `json:"roles"`
	Model    *string               `json:"model"`
	AudioS   float64               `json:"audio_s"`
	DiarizeS *float64              `json:"diarize_s"`
}

// liveFinalTranscript is final_transcript built from the live transcript.
func liveFinalTranscript(st *State) FinalTranscript {
	lines := make([]FinalTranscriptLine, 0, len(st.Sentences))
	for _, s := range st.Sentences {
		lines = append(lines, FinalTranscriptLine{N: s.I + 1, Start: s.T, Text: s.Text})
	}
	return FinalTranscript{Lines: lines, Roles: map[string]string{}, AudioS: st.AudioS}
}

// pass2NotRun is summary.pass2 of a vertical whose pass 2 does not run
// here (sales: diarization and roles only; field): {ran: false, reason}.
func pass2NotRun(reason string) map[string]any {
	return map[string]any{"ran": false, "reason": reason}
}

// laneData is the data of lane id in st, or empty when the lane has no
// state yet.
func laneData(st *State, id string, empty func() any) any {
	if lb, ok := st.Lanes[id]; ok && lb.Data != nil {
		return lb.Data
	}
	return empty()
}

// decodeAnswer unmarshals a lane's JSON answer strictly.
func decodeAnswer(answer json.RawMessage, v any) error {
	if err := json.Unmarshal(answer, v); err != nil {
		return fmt.Errorf("the model's answer is not the lane's JSON: %w", err)
	}
	return nil
}
