package guard

import (
	"encoding/json"
	"testing"
)

// TestOpenAIErrorParam: an SDK's error object names the request field a
// 400 is about (error.param), read from the message's first words, and
// null when the message names none or the status is not a request error.
func TestOpenAIErrorParam(t *testing.T) {
	for _, c := range []struct {
		status int
		msg    string
		param  any
	}{
		{400, "previous_response_id: this box stores no responses; send the earlier turns in input", "previous_response_id"},
		{400, "max_output_tokens must be 1 to 2048", "max_output_tokens"},
		{400, "input[2].content[0].text must be a string, not a number", "input[2].content[0].text"},
		{400, "input[0] (function_call_output): no function_call with call_id \"c\" comes before it in input", "input[0]"},
		{400, `unknown field "colour"; remove it`, "colour"},
		{400, `field synthetic must be true or false, not a string`, "synthetic"},
		{400, "the body is not JSON: unexpected end of input", nil},
		{404, "model is required: the model to use", nil},
		{413, "messages holds 48,001 characters; at most 48,000", "messages"},
	} {
		raw, _ := json.Marshal(map[string]string{"error": c.msg})
		out, ok := openAIErrorBody(c.status, raw)
		if !ok {
			t.Fatalf("%q: not rewritten", c.msg)
		}
		var v struct {
			Error struct {
				Message string `json:"message"`
				Param   any    `json:"param"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		if v.Error.Param != c.param || v.Error.Message != c.msg {
			t.Errorf("%d %q: param %v, want %v", c.status, c.msg, v.Error.Param, c.param)
		}
	}
}
