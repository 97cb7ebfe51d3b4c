package daemon

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"boxd/docs"
	"boxd/engine/attest"
)

// TestReadmeReceiptSnippet runs README's verify_receipt.py on a live box's
// receipts: a text answer and a tool-call answer verify (signature,
// commitment, output_hash over the answer as returned), and a changed
// receipt, another answer, or another key fail.
func TestReadmeReceiptSnippet(t *testing.T) {
	python, script := docs.PythonScript(t, "# verify_receipt.py", "cryptography.hazmat.primitives.asymmetric.ed25519")
	env := chatServer(t, nil, 2048, 2, 0)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pub := env.do(t, call{method: "GET", path: "/attest/signing-key"}).json(t)["pubkey"].(string)
	verify := func(args ...string) (string, bool) {
		out, err := exec.Command(python, append([]string{script}, args...)...).CombinedOutput()
		return string(out), err == nil
	}

	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "enum": []string{"Boston <&> Co"}}}, "required": []string{"city"}}}}}
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{"text", chatBodyJSON(map[string]any{"max_tokens": 8, "messages": []any{map[string]any{"role": "user", "content": "Café? <b>"}}})},
		{"tool call", chatBodyJSON(map[string]any{"max_tokens": 200, "tools": tools, "tool_choice": "required", "parallel_tool_calls": false})},
	} {
		r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: env.token, body: tc.body})
		if r.status != 200 {
			t.Fatalf("%s: %d %s", tc.name, r.status, r.body)
		}
		var resp struct {
			ID      string
			Choices []struct {
				Message struct {
					Content   *string
					ToolCalls json.RawMessage `json:"tool_calls"`
				}
			}
		}
		if err := json.Unmarshal(r.body, &resp); err != nil {
			t.Fatal(err)
		}
		answer := []byte(resp.Choices[0].Message.ToolCalls)
		if resp.Choices[0].Message.Content != nil {
			answer = []byte(*resp.Choices[0].Message.Content)
		}
		if len(answer) == 0 {
			t.Fatalf("%s: no answer: %s", tc.name, r.body)
		}
		body := env.do(t, call{method: "GET", path: "/receipts/" + resp.ID}).body
		bodyFile, answerFile := write(tc.name+".json", body), write(tc.name+".txt", answer)
		if out, ok := verify(bodyFile, pub, answerFile); !ok || !strings.Contains(out, "verified "+resp.ID) {
			t.Errorf("%s: the README's snippet does not verify the box's receipt: %s", tc.name, out)
		}
		var rec struct {
			Receipt attest.SignedModelCall
		}
		_ = json.Unmarshal(body, &rec)
		changed := write(tc.name+"-changed.json", bytes.Replace(body, []byte(rec.Receipt.WeightsRoot), []byte(strings.Repeat("0", 64)), -1))
		if out, ok := verify(changed, pub, answerFile); ok || !strings.Contains(out, "commitment does not match") {
			t.Errorf("%s: a changed receipt: %s", tc.name, out)
		}
		if out, ok := verify(bodyFile, pub, write(tc.name+"-other.txt", append(answer, ' '))); ok || !strings.Contains(out, "output_hash is not this answer") {
			t.Errorf("%s: another answer: %s", tc.name, out)
		}
		other, _, _ := attest.LoadOrCreateKey(t.TempDir())
		if out, ok := verify(bodyFile, other.PublicKeyHex()); ok || !strings.Contains(out, "not signed by this box's key") {
			t.Errorf("%s: another key: %s", tc.name, out)
		}
	}
}
