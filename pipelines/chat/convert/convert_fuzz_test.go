package convert

import (
	"bytes"
	"encoding/json"
	"testing"

	"boxd/internal/problem"
)

// FuzzConvert: any body the routes read (strictly) converts or is refused
// with a 400 that says what to fix; never a panic.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":"hi","instructions":"x","max_output_tokens":5}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:image/png;base64,AA=="}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"r"}]}]}`,
		`{"model":"m","input":"x","tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"tool_choice":{"type":"function","name":"f"}}`,
		`{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"v","schema":{"type":"object"}}}}`,
		`{"model":"m","input":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a","annotations":[]},{"type":"refusal","refusal":"no"}]}]}`,
		`{"model":"m","prompt":["a"],"max_tokens":3,"stop":["x"]}`,
		`{"model":"m","input":[{}],"tools":[{}],"tool_choice":{}}`, `{"input":[[]]}`, `{"prompt":[[1]]}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(err error) {
			if err == nil {
				return
			}
			if p, ok := problem.As(err); !ok || p.Kind != problem.Invalid || p.Message == "" {
				t.Fatalf("%q: %v, want a 400 with a message", data, err)
			}
		}
		var rr ResponsesRequest
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if dec.Decode(&rr) == nil {
			c, err := FromResponses(&rr)
			check(err)
			if err == nil && len(c.Chat.Messages) != len(c.paths) {
				t.Fatalf("%q: %d messages, %d paths", data, len(c.Chat.Messages), len(c.paths))
			}
		}
		var cr CompletionRequest
		dec = json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if dec.Decode(&cr) == nil {
			_, err := FromCompletions(&cr)
			check(err)
		}
	})
}
