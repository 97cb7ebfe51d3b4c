package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCutToolCalls: an answer the length cap cut inside the tool-call
// object gives the calls complete before the cut and the call being
// written once its name is complete (arguments as written so far), never
// the wrapper.
func TestCutToolCalls(t *testing.T) {
	m := &toolMode{choice: "required", tools: []Tool{
		{Type: "function", Function: FunctionDef{Name: "get_weather"}},
		{Type: "function", Function: FunctionDef{Name: "book"}},
	}}
	type call struct{ name, args string }
	for _, tc := range []struct {
		text string
		want []call
	}{
		{`{"tool_calls": [{"na`, nil},
		{`{"tool_c`, nil},
		{`{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bos`, []call{{"get_weather", `{"city": "Bos`}}},
		{`{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Boston"}}, {"name": "book", "argu`,
			[]call{{"get_weather", `{"city":"Boston"}`}}},
		{`{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Boston"}}, {"name": "book", "arguments": {`,
			[]call{{"get_weather", `{"city":"Boston"}`}, {"book", `{`}}},
		{`{"tool_calls": [{"name": "get_weather", "arguments": {}}, {"name": "nope", "arguments": {}}`, []call{{"get_weather", `{}`}}},
		{` {"tool_calls": [{"name": "get_weather", "arguments": {"a": [1, 2]}}`, []call{{"get_weather", `{"a":[1,2]}`}}},
	} {
		got := m.cut(tc.text)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d calls %+v, want %d", tc.text, len(got), got, len(tc.want))
			continue
		}
		for i, c := range got {
			if c.Function.Name != tc.want[i].name || c.Function.Arguments != tc.want[i].args || c.Type != "function" || !strings.HasPrefix(c.ID, "call_") {
				t.Errorf("%s: call %d = %+v", tc.text, i, c)
			}
		}
	}
}

// TestToolGrammar: each call's schema lists name before arguments, so the
// grammar writes the name first and a cut call still names its function;
// and the calls are bounded: 8 unless parallel_tool_calls is false (1).
func TestToolGrammar(t *testing.T) {
	no := false
	for _, tc := range []struct {
		parallel *bool
		calls    string
	}{{nil, `tool-calls-item ("," space tool-calls-item){0,7} "]"`}, {&no, `"[" space tool-calls-item  "]"`}} {
		tm, err := parseTools(&Request{Tools: []Tool{{Type: "function", Function: FunctionDef{Name: "get_weather",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}},
			ToolChoice: json.RawMessage(`"required"`), ParallelToolCalls: tc.parallel})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(tm.grammar, `tool-calls-item ::= "{" space tool-calls-item-name-kv "," space tool-calls-item-arguments-kv "}"`) {
			t.Errorf("a call's name is not written first:\n%s", tm.grammar)
		}
		if !strings.Contains(tm.grammar, tc.calls) {
			t.Errorf("parallel_tool_calls %v: calls not bounded by %s:\n%s", tc.parallel, tc.calls, tm.grammar)
		}
	}
}
