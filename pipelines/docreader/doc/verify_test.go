package doc

import (
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/docreader/exact/exacttest"
	"boxd/pipelines/docreader/reread"
)

func testKey() *attest.Key {
	return attest.NewKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
}

// verified reads raw as the verifiers do and reports whether every check
// holds (false with the reason otherwise).
func verified(raw []byte, pub ed25519.PublicKey) (bool, string) {
	d, err := Decode(raw)
	if err != nil {
		return false, err.Error()
	}
	cs, err := Verify(d, pub)
	if err != nil {
		return false, err.Error()
	}
	for _, c := range cs {
		if !c.OK {
			return false, c.Name + ": " + c.Detail
		}
	}
	return true, ""
}

// signedDocument is a document with every field of every type filled in
// (so fields added later are covered too), signed.
func signedDocument(t *testing.T, k *attest.Key) []byte {
	t.Helper()
	var d Document
	exacttest.Fill(&d, "Receipt")
	if err := Sign(k, &d, Revisions{Parser: "p", OCR: "o", Layout: "l"}, []ModelCallRef{{ID: "mc-1", Kind: "reread"}}, true); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestEveryFieldUnderTheSignature: a document verifies as read, and every
// change to it is refused or fails a check: each value changed (the
// reread summary, the models, charts_by_model and the rest), each field
// removed (models included), a field added to each object (the top level
// included), each list shortened or lengthened. Before, a changed reread
// or charts_by_model, a removed models and any extra field verified.
func TestEveryFieldUnderTheSignature(t *testing.T) {
	k := testKey()
	raw := signedDocument(t, k)
	if ok, why := verified(raw, k.PublicKey()); !ok {
		t.Fatalf("the signed document does not verify: %s", why)
	}
	ms, err := exacttest.Mutations(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 200 {
		t.Fatalf("only %d mutations: the filled document is too small", len(ms))
	}
	t.Logf("%d mutations of a %d-byte document", len(ms), len(raw))
	for _, want := range []string{".reread.below_bp changed", ".models removed", ".charts_by_model.read changed", ": a field added", ".reread.note changed"} {
		found := false
		for _, m := range ms {
			found = found || strings.HasSuffix(m.What, want) || m.What == want
		}
		if !found {
			t.Errorf("no mutation %q", want)
		}
	}
	for _, m := range ms {
		if ok, _ := verified(m.JSON, k.PublicKey()); ok {
			t.Errorf("%s: verifies", m.What)
		}
	}
}

// TestDecodeTakesTheDocumentAsWritten: whitespace and key order are
// free; a number written another way (5e-1 for 0.5: numbers count as the
// box wrote them), a key twice, a value of another type, an extra or a
// missing field are refused, and null for a list is the empty list,
// which the receipt does not bind.
func TestDecodeTakesTheDocumentAsWritten(t *testing.T) {
	k := testKey()
	raw := signedDocument(t, k)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	pretty, _ := json.MarshalIndent(m, "", "   ") // keys sorted, indented
	if ok, why := verified(pretty, k.PublicKey()); !ok {
		t.Errorf("reformatted: %s", why)
	}
	if ok, why := verified([]byte(strings.Replace(string(raw), `"deskew":0.5`, `"deskew":5e-1`, 1)), k.PublicKey()); ok || !strings.Contains(why, "document.pages[0].deskew is written 5e-1") {
		t.Errorf("a number written another way: %v %s", ok, why)
	}
	with := func(change func(map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		change(m)
		j, _ := json.Marshal(m)
		return string(j)
	}
	for _, c := range []struct{ name, json, want string }{
		{"a key twice", strings.Replace(string(raw), `{"id":`, `{"id":"x","id":`, 1), `document.id appears twice`},
		{"a number as a string", strings.Replace(string(raw), `"deskew":0.5`, `"deskew":"0.5"`, 1), `deskew`},
		{"an extra field", strings.Replace(string(raw), `{"id":`, `{"comment":"ok","id":`, 1), `document.comment is not a field`},
		{"models removed", with(func(m map[string]any) { delete(m, "models") }), `document.models is missing`},
		{"not an object", `[1]`, `not a JSON object`},
	} {
		_, err := Decode([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	if ok, why := verified([]byte(with(func(m map[string]any) { m["fields"] = nil })), k.PublicKey()); ok || !strings.HasPrefix(why, "fields:") {
		t.Errorf("fields null: %v %s", ok, why)
	}
	// The stream's done event carries the document beside its type and
	// at_ms: it verifies as received; that envelope on anything else, or
	// half of it, does not.
	if ok, why := verified([]byte(with(func(m map[string]any) { m["type"], m["at_ms"] = "done", 1234 })), k.PublicKey()); !ok {
		t.Errorf("the done event: %s", why)
	}
	for _, c := range []struct {
		name string
		add  func(map[string]any)
	}{
		{"another event's type", func(m map[string]any) { m["type"], m["at_ms"] = "page", 1 }},
		{"type alone", func(m map[string]any) { m["type"] = "done" }},
		{"at_ms alone", func(m map[string]any) { m["at_ms"] = 1 }},
		{"a negative at_ms", func(m map[string]any) { m["type"], m["at_ms"] = "done", -1 }},
	} {
		if ok, _ := verified([]byte(with(c.add)), k.PublicKey()); ok {
			t.Errorf("%s: verifies", c.name)
		}
	}
}

// TestOlderReceiptsBindNoSummaries: a receipt that binds no reread or
// charts_by_model summary (one signed before they were bound) does not
// verify a document that has them; a document without them verifies.
func TestOlderReceiptsBindNoSummaries(t *testing.T) {
	k := testKey()
	d := Document{ID: "doc-1", File: FileInfo{SHA256: "x", Type: "pdf", Bytes: 1, Pages: 1}, Pages: []Page{}, Fields: []Field{}, Models: []ModelRef{}}
	if err := Sign(k, &d, Revisions{}, nil, true); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(d)
	if ok, why := verified(raw, k.PublicKey()); !ok {
		t.Fatalf("a plain document: %s", why)
	}
	d.Reread = &reread.Summary{BelowBP: 9000}
	d.ChartsByModel = &chart.FiguresSummary{Read: 1}
	raw, _ = json.Marshal(d)
	if ok, why := verified(raw, k.PublicKey()); ok || !strings.Contains(why, "does not bind") {
		t.Errorf("summaries the receipt does not bind: %v %s", ok, why)
	}
}
