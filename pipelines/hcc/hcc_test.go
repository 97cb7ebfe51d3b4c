package hcc

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"boxd/pipelines/llmcall/llmcalltest"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/cite"
	"boxd/pipelines/codes"
	"boxd/pipelines/docreader"
	"boxd/pipelines/llmcall"
)

func tables(t *testing.T) *codes.Tables {
	t.Helper()
	dir := os.Getenv("BOXD_TEST_DATA")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BOXD_TEST_DATA is not set (the Makefile sets it)")
		}
		t.Skip("BOXD_TEST_DATA is not set; run through make")
	}
	tb, err := codes.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func testKey() *attest.Key {
	s := make([]byte, ed25519.SeedSize)
	s[0] = 9
	return attest.NewKey(ed25519.NewKeyFromSeed(s))
}

// chartLines are a chart's lines as the reader numbers them.
func chartLines() []Line {
	texts := []string{"PROGRESS NOTE", "Patient: Alex Example (synthetic)", "Visit date: 2026-03-02",
		"Assessment: type 2 diabetes mellitus without complications.", "Hypertension, well controlled on current medication.",
		"Plan: continue metformin 500 mg twice daily."}
	var out []Line
	for i, s := range texts {
		out = append(out, Line{N: i + 1, Element: "p1-e" + string(rune('1'+i)), Page: 1, BBox: [4]int{100, 100 + 60*i, 600, 30}, Text: s})
	}
	return out
}

// TestAssemble: only what the chart says stays. Note items and
// diagnoses whose quotes are verbatim in their cited lines keep those
// lines' elements, pages and boxes; a quote not in its line, a line that
// does not exist, a category instead of a billable code, a code ICD-10-CM
// does not have, and a citation that is not one, are rejected with why.
func TestAssemble(t *testing.T) {
	s := &Service{Codes: tables(t)}
	out := &Result{Lines: chartLines()}
	answer := `{
	 "summary": ["[1] Progress note: PROGRESS NOTE"],
	 "problems": ["[4] Diabetes: type 2 diabetes mellitus without complications", "[4] Asthma: asthma", "no citation here"],
	 "medications": ["[6] Metformin: metformin 500 mg twice daily"],
	 "plan": ["[9] Labs: recheck HbA1c"],
	 "diagnoses": [
	  {"code": "E119", "cite": "[4] type 2 diabetes mellitus without complications"},
	  {"code": "E11.9", "cite": "[4] type 2 diabetes mellitus"},
	  {"code": "I10", "cite": "[5] Hypertension"},
	  {"code": "E11", "cite": "[4] type 2 diabetes"},
	  {"code": "Z99.999", "cite": "[5] Hypertension"},
	  {"code": "J45.909", "cite": "[4] asthma"}
	 ]}`
	if err := s.assemble(out, json.RawMessage(answer)); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, sec := range out.Note {
		for _, it := range sec.Items {
			got[sec.Title] = append(got[sec.Title], it.Text+"|"+it.Cite.Quote+"|"+it.Cite.Lines[0].Element)
		}
	}
	want := map[string][]string{
		"summary":     {"Progress note|PROGRESS NOTE|p1-e1"},
		"problems":    {"Diabetes|type 2 diabetes mellitus without complications|p1-e4"},
		"medications": {"Metformin|metformin 500 mg twice daily|p1-e6"},
	}
	for k, v := range want {
		if strings.Join(got[k], ";") != strings.Join(v, ";") {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if len(got["plan"]) != 0 || len(out.Note) != 4 || out.Note[3].Title != "plan" {
		t.Errorf("note %+v", out.Note)
	}
	var dx []string
	for _, d := range out.Review.Diagnoses {
		dx = append(dx, d.Code+"|"+d.Description+"|"+d.Cite.Lines[0].Element)
		if d.Cite.Lines[0].BBox != out.Lines[3].BBox && d.Cite.Lines[0].BBox != out.Lines[4].BBox {
			t.Errorf("%s: box %v", d.Code, d.Cite.Lines[0].BBox)
		}
	}
	if strings.Join(dx, ";") != "E11.9|Type 2 diabetes mellitus without complications|p1-e4;I10|Essential (primary) hypertension|p1-e5" {
		t.Errorf("diagnoses %q", dx)
	}
	reasons := map[string]string{}
	for _, r := range out.Rejected {
		reasons[r.Wrote] = r.Reason
	}
	for wrote, why := range map[string]string{
		"[4] Asthma: asthma":       "not in the cited lines",
		"no citation here":         "not \"[n] label: quote\"",
		"[9] Labs: recheck HbA1c":  "line 9 does not exist",
		"E11 [4] type 2 diabetes":  "a category",
		"Z99.999 [5] Hypertension": "no such billable code",
		"J45.909 [4] asthma":       "not in the cited lines",
	} {
		if !strings.Contains(reasons[wrote], why) {
			t.Errorf("%q: rejected for %q, want %q", wrote, reasons[wrote], why)
		}
	}
	if len(out.Rejected) != 6 {
		t.Errorf("%d rejected: %+v", len(out.Rejected), out.Rejected)
	}
}

// TestReadChart: the scanned sample end to end on the real engines (MuPDF,
// Tesseract, the tiny random chat model through the answer's grammar):
// the document is read and signed, its lines numbered with their boxes,
// the call receipted and charged, every note item and diagnosis kept is
// verified against its lines, and the signed record verifies. Without a
// chat model or the code tables the route is 503.
func TestReadChart(t *testing.T) {
	tb := tables(t)
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 4096, Parallel: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	key := testKey()
	iss := &llmcalltest.Issuer{}
	chat := &llmcall.Model{Engine: e, ModelID: "tiny-chat", WeightsRoot: strings.Repeat("cd", 32), Upstream: "tiny", Provider: "test", Receipts: iss}
	reader := &docreader.Service{Key: key}
	s := &Service{Reader: reader, Chat: chat, Codes: tb, Key: key}
	b := &llmcalltest.Budget{}
	out, err := s.Read(context.Background(), run.Env{Budget: b}, Request{Sample: docreader.SampleScanned})
	if err != nil {
		if strings.Contains(err.Error(), "OCR") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if out.Document == nil || out.Document.Receipt.Sig == "" || len(out.Lines) < 5 || out.Lines[0].Element == "" || out.Lines[0].Page != 1 {
		t.Fatalf("document/lines: %+v", out.Lines)
	}
	if len(iss.Calls()) != 1 || len(out.Receipts) != 1 || len(b.Committed()) != 1 {
		t.Errorf("receipts %d %v, committed %v", len(iss.Calls()), out.Receipts, b.Committed())
	}
	ls := make(cite.Lines, len(out.Lines))
	for i, l := range out.Lines {
		ls[i] = cite.Line{N: l.N, Text: l.Text}
	}
	for _, sec := range out.Note {
		for _, it := range sec.Items {
			var ns []int
			for _, l := range it.Cite.Lines {
				ns = append(ns, l.N)
			}
			if p := cite.Problem(ls, it.Cite.Quote, ns); p != "" {
				t.Errorf("kept an unverified item %+v: %s", it, p)
			}
		}
	}
	for _, d := range out.Review.Diagnoses {
		if _, ok := tb.ICD10CM(d.Code); !ok {
			t.Errorf("kept a code the tables lack: %+v", d)
		}
	}
	raw, err := json.Marshal(out.Record)
	if err != nil {
		t.Fatal(err)
	}
	if v := attest.VerifyRecord(raw, key.PublicKey()); !v.OK || v.Entries != 5 {
		t.Errorf("record: %+v", v)
	}
	for _, c := range []struct {
		s    *Service
		says string
	}{
		{&Service{Reader: reader, Codes: tb, Key: key}, "chat model"},
		{&Service{Reader: reader, Chat: chat, Key: key}, "ICD-10-CM tables"},
	} {
		if _, err := c.s.Read(context.Background(), run.Env{Budget: b}, Request{Sample: docreader.SampleScanned}); !problem.Is(err, problem.Unavailable) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", c.says, err)
		}
	}
	yes := true
	if _, err := s.Read(context.Background(), run.Env{}, Request{File: "/tmp/x", Synthetic: &yes, Sample: docreader.SampleScanned}); !problem.Is(err, problem.Invalid) {
		t.Errorf("both a file and a sample: %v", err)
	}
}
