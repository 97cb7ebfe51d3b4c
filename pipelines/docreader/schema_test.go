package docreader

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/pipelines/llmcall/llmcalltest"

	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/llmcall"
)

// TestSchemaMapping: the intake form's fields mapped to a caller's
// schema by the (tiny, random) chat model through the schema's grammar:
// the answer has the schema's shape, every string in it is listed with
// the field holding it or none (the random model's strings hold none, so
// all count as unsupported), the call is receipted and charged, the
// password never reaches the model, and the receipt binds the mapping.
func TestSchemaMapping(t *testing.T) {
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 2048, Parallel: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	iss := &llmcalltest.Issuer{}
	chat := &llmcall.Model{Engine: e, ModelID: "tiny-chat", WeightsRoot: strings.Repeat("ab", 32), Upstream: "tiny", Provider: "test", Receipts: iss}
	s := &Service{Key: testKey(3), Chat: chat}
	path := filepath.Join(t.TempDir(), "form.pdf")
	if err := os.WriteFile(path, intakeForm(), 0o600); err != nil {
		t.Fatal(err)
	}
	yes := true
	schema := json.RawMessage(`{"type":"object","properties":{"patient":{"type":"string","maxLength":24},"birth_date":{"type":"string","maxLength":12}},"required":["patient","birth_date"]}`)
	b := &llmcalltest.Budget{}
	d, err := s.Read(context.Background(), run.Env{Budget: b}, ReadRequest{File: path, Synthetic: &yes, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if d.Mapped == nil || len(d.Fields) == 0 {
		t.Fatalf("mapped %v, %d fields", d.Mapped, len(d.Fields))
	}
	var obj map[string]string
	if err := json.Unmarshal(d.Mapped.Object, &obj); err != nil {
		t.Fatalf("mapped object %s: %v", d.Mapped.Object, err)
	}
	if _, ok := obj["patient"]; !ok {
		t.Errorf("no patient in %s", d.Mapped.Object)
	}
	paths := map[string]bool{}
	unsupported := 0
	for _, src := range d.Mapped.Sources {
		paths[src.Path] = true
		if src.Field == "" && strings.TrimSpace(src.Value) != "" {
			unsupported++
		}
		if src.Field != "" {
			if id := fieldHolding(d.Fields, src.Value); id != src.Field {
				t.Errorf("%s: field %s, but %s holds %q", src.Path, src.Field, id, src.Value)
			}
		}
	}
	if !paths["/patient"] || !paths["/birth_date"] || unsupported != d.Mapped.Unsupported {
		t.Errorf("sources %+v, unsupported %d", d.Mapped.Sources, d.Mapped.Unsupported)
	}
	if len(iss.Calls()) != 1 || d.Mapped.Receipt == "" || len(b.Committed()) != 1 || b.Committed()[0] < 1 {
		t.Fatalf("receipts %d (%q), committed %v", len(iss.Calls()), d.Mapped.Receipt, b.Committed())
	}
	if len(d.Receipt.ModelCalls) != 1 || d.Receipt.ModelCalls[0].ID != d.Mapped.Receipt || d.Receipt.ModelCalls[0].Kind != "schema" ||
		len(d.Models) != 1 || d.Models[0].Role != "schema" || d.Receipt.Mapped == "" {
		t.Errorf("receipt %+v, models %+v", d.Receipt, d.Models)
	}
	if iss.Calls()[0].Params["response_format"] != "json_schema" {
		t.Errorf("params %v", iss.Calls()[0].Params)
	}
	checks, err := Verify(d, s.Key.PublicKey())
	if err != nil || !allOK(checks) {
		t.Fatalf("verify: %v %+v", err, checks)
	}
	d.Mapped.Object = json.RawMessage(`{"patient":"Someone Else","birth_date":""}`)
	if checks, _ := Verify(d, s.Key.PublicKey()); allOK(checks) || !strings.Contains(checkText(checks), "schema mapping differs") {
		t.Errorf("tampered mapping verified: %+v", checks)
	}
	// No chat model: 503 before anything is read.
	_, err = (&Service{Key: testKey(3)}).Read(context.Background(), run.Env{Budget: b}, ReadRequest{File: path, Synthetic: &yes, Schema: schema})
	if !problem.Is(err, problem.Unavailable) || !strings.Contains(err.Error(), "chat model") {
		t.Errorf("no chat: %v", err)
	}
}

func allOK(cs []Check) bool {
	for _, c := range cs {
		if !c.OK {
			return false
		}
	}
	return len(cs) > 0
}

func checkText(cs []Check) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Name + ": " + c.Detail + "\n")
	}
	return b.String()
}

// TestMappedSources: strings found anywhere in the answer, by JSON
// pointer (keys escaped), tied to the field holding the value.
func TestMappedSources(t *testing.T) {
	fields := []Field{{ID: "p1-f1", Value: "Jordan  Sample"}, {ID: "p1-f2", Value: "secret", Redacted: true}, {ID: "p1-f3", Value: "1961-04-12"}}
	var v any
	if err := json.Unmarshal([]byte(`{"a/b":{"x":"jordan sample"},"list":["1961-04-12","made up"],"n":3,"s":"secret"}`), &v); err != nil {
		t.Fatal(err)
	}
	var got []string
	walkStrings(v, "", func(p, s string) { got = append(got, p+"="+fieldHolding(fields, s)) })
	want := "/a~1b/x=p1-f1 /list/0=p1-f3 /list/1= /s="
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
}
