package live

// Helpers the verticals' lanes share: the numbered transcript they are
// prompted with, reading and tidying a model's answer, and reading the
// lanes' states.

import (
	"encoding/json"
	"fmt"
	"strings"

	"boxd/pipelines/cite"
)

// promptTranscriptChars bounds the transcript in a prompt (about 4,000
// tokens), so prompt and answer fit an 8,192-token context.
const promptTranscriptChars = 16000

// NumberedTranscript is the transcript as numbered lines ([n] text, see
// State.Lines) for a lane's prompt: the latest lines when it is longer
// than about 4,000 tokens (16,000 characters), after a line saying which
// were left out, or "" when nothing has been said yet.
func NumberedTranscript(st *State) string {
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

// CiteLines is the transcript as the numbered lines package cite checks
// citations against: sentence I is line I+1.
func (st *State) CiteLines() cite.Lines {
	ls := make(cite.Lines, len(st.Sentences))
	for k, s := range st.Sentences {
		ls[k] = cite.Line{N: s.I + 1, T: s.T, Text: s.Text}
	}
	return ls
}

// CleanText trims a model string and joins its words with single spaces;
// strings are single-line ASCII by schema.
func CleanText(s string) string { return strings.Join(strings.Fields(s), " ") }

// CleanList is CleanText of each string, empty ones dropped; never nil.
func CleanList(in []string) []string {
	out := []string{}
	for _, s := range in {
		if s = CleanText(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// DecodeAnswer unmarshals a lane's JSON answer into v, with an error that
// says the answer is not the lane's JSON.
func DecodeAnswer(answer json.RawMessage, v any) error {
	if err := json.Unmarshal(answer, v); err != nil {
		return fmt.Errorf("the model's answer is not the lane's JSON: %w", err)
	}
	return nil
}

// LaneData is the data of lane id in st, or empty() when the lane has no
// state (or no data) yet.
func LaneData(st *State, id string, empty func() any) any {
	if lb, ok := st.Lanes[id]; ok && lb.Data != nil {
		return lb.Data
	}
	return empty()
}

// LaneOf is lane id's data as a T, or T's zero value when the lane has no
// state or its data is not a T.
func LaneOf[T any](st *State, id string) T {
	var zero T
	lb, ok := st.Lanes[id]
	if !ok {
		return zero
	}
	v, _ := lb.Data.(T)
	return v
}
