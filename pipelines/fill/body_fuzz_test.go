package fill

import (
	"crypto/ed25519"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"boxd/engine/attest"
	"boxd/internal/problem"
)

// FuzzBody: POST /fill/run's body checks (the target form's markup, the
// sources, the review language, all the caller's) and the reading of
// the sources into numbered lines never panic; a refusal is a problem
// with a message; an accepted form holds an input, select or textarea
// and none of the refused forms' words; the lines are the sources'
// words, in order, at most 500 characters each, numbered from 1.
func FuzzBody(f *testing.F) {
	for _, s := range [][4]string{
		{`<html lang="de"><form><label>Name <input name="n"></label></form></html>`, "Name: Ana Ruiz\nDOB: 03/04/1990", "id.txt", "de"},
		{`<form><select name=s><option>a</option></select></form>`, "Card: 4111 1111 1111 1111\fpage two\n\n  spaced   out  ", "card", ""},
		{`<form><textarea></textarea>Visa application</form>`, "x", "a", "en"},
		{`<form><input>court filing</form>`, "x", "a", "en"},
		{`<FORM><INPUT name=a></FORM>`, strings.Repeat("é", 1200), "long", "fr"},
		{`<p>no fields</p>`, "x", " ", "xx"},
		{`<html lang=en-US><input>`, "\xff\xfe\x00line\r\nnext", "bin", "en"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, html, text, name, lang string) {
		b := &Body{Sources: []SourceBody{{Name: name, Text: &text}}, ReviewLang: lang}
		b.Target = &struct {
			HTML string `json:"html"`
			Demo string `json:"demo"`
		}{HTML: html}
		req, err := b.Validate()
		if err != nil {
			if p, ok := problem.As(err); !ok || p.Message == "" {
				t.Fatalf("refusal %v (%T), want a problem", err, err)
			}
			return
		}
		low := strings.ToLower(req.HTML)
		if !strings.Contains(low, "<input") && !strings.Contains(low, "<select") && !strings.Contains(low, "<textarea") {
			t.Fatalf("accepted a form without fields: %q", html)
		}
		for _, ex := range excluded {
			if wordsRE(ex.words).MatchString(req.HTML) {
				t.Fatalf("accepted %s: %q", ex.what, html)
			}
		}
		if !slices.Contains(ReviewLangs, req.ReviewLang) || len(req.Sources) != 1 || req.Sources[0].Text != text {
			t.Fatalf("request %+v", req)
		}
		lines, err := Lines(req.Sources)
		if err != nil {
			t.Fatal(err)
		}
		var words []string
		for i, l := range lines {
			if l.N != i+1 || l.Doc != name || l.Page < 1 || l.Page > strings.Count(text, "\f")+1 {
				t.Fatalf("line %d: %+v", i, l)
			}
			if l.Text == "" || utf8.RuneCountInString(l.Text) > maxLineRunes {
				t.Fatalf("line %d is %q", i, l.Text)
			}
			words = append(words, l.Text)
		}
		// A long line is cut anywhere, even inside a word: the lines'
		// characters other than spaces are the source's, in order.
		if got, want := strings.Join(strings.Fields(strings.Join(words, "")), ""), strings.Join(strings.Fields(text), ""); got != want && utf8.ValidString(text) {
			t.Fatalf("lines say %q, the source %q", got, want)
		}
		s := Withheld(nil, lines)
		for _, l := range lines {
			if m := l.forModel(s, name); !strings.HasPrefix(m, "[") {
				t.Fatalf("line for the model %q", m)
			}
		}
	})
}

// FuzzApprove: POST /fill/runs/{id}/approve's body (the person's name,
// the flags acknowledged) is checked and signed without panicking; an
// approval names a person of 1 to 200 characters, acknowledges every
// flag and only real ones, and its record verifies.
func FuzzApprove(f *testing.F) {
	f.Add(`{"person":{"name":"Ana Ruiz"},"confirm":true,"acknowledge_flags":[1,2]}`)
	f.Add(`{"person":{"name":"  "},"confirm":true,"acknowledge_flags":[]}`)
	f.Add(`{"person":{"name":"Ana"},"confirm":false}`)
	f.Add(`{"person":{"name":"Ana\u202e\u001b[31m"},"confirm":true,"acknowledge_flags":[1,2,3,-1]}`)
	f.Add(`{"person":{"name":"` + strings.Repeat("é", 201) + `"},"confirm":true,"acknowledge_flags":[2,1,1]}`)
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 5
	k := attest.NewKey(ed25519.NewKeyFromSeed(seed))
	now := time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC)
	rec, err := attest.NewRecord("fill", "fr_1", nil).Sign(k, now)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var b ApproveBody
		if json.Unmarshal([]byte(body), &b) != nil {
			return
		}
		if err := b.Validate(); err != nil {
			if p, ok := problem.As(err); !ok || p.Message == "" {
				t.Fatalf("refusal %v, want a problem", err)
			}
			return
		}
		out := &Result{ID: "fr_1", Record: rec, Review: Review{Flags: []Flag{{N: 1, Why: "x"}, {N: 2, Why: "y"}}}}
		a, err := Approve(out, b, k, now)
		if err != nil {
			if p, ok := problem.As(err); !ok || p.Message == "" {
				t.Fatalf("refusal %v, want a problem", err)
			}
			return
		}
		if n := utf8.RuneCountInString(a.Person); a.Person == "" || n > 200 {
			t.Fatalf("approved by %q", a.Person)
		}
		for _, fl := range out.Review.Flags {
			if !slices.Contains(a.Acknowledged, fl.N) {
				t.Fatalf("flag %d not acknowledged: %v", fl.N, a.Acknowledged)
			}
		}
		for _, n := range a.Acknowledged {
			if n < 1 || n > len(out.Review.Flags) {
				t.Fatalf("acknowledged flag %d", n)
			}
		}
		raw, err := json.Marshal(a.Record)
		if err != nil {
			t.Fatal(err)
		}
		if fc := Flight(raw, k.PublicKey()); !fc.OK || fc.Step != nil {
			t.Fatalf("the approval's record does not verify: %s", fc.Problem)
		}
	})
}

// FuzzFlight: POST /flight/verify (anyone's to call) never panics; a
// changed step it names is within the record's entries.
func FuzzFlight(f *testing.F) {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 6
	k := attest.NewKey(ed25519.NewKeyFromSeed(seed))
	rb := attest.NewRecord("fill", "fr_1", map[string]string{"demo": "clinic-intake"})
	rb.AddText("sources", "Name: Ana", map[string]any{"step": "sources"})
	rb.AddText("field", `{"name":"Ana"}`, map[string]any{"step": "field"})
	rec, err := rb.Sign(k, time.Date(2026, 9, 23, 12, 0, 0, 0, time.UTC))
	if err != nil {
		f.Fatal(err)
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(strings.Replace(string(raw), "Ana", "Bob", 1)))
	f.Add([]byte(`{"entries":[{"type":"x"}]}`))
	f.Add([]byte(`{`))
	pub := k.PublicKey()
	f.Fuzz(func(t *testing.T, data []byte) {
		fc := Flight(data, pub)
		if fc.OK != (fc.Problem == "") {
			t.Fatalf("ok %v with problem %q", fc.OK, fc.Problem)
		}
		if fc.OK && fc.Step != nil {
			t.Fatalf("ok with a changed step %+v", fc.Step)
		}
		if fc.Step != nil && fc.Step.N < 1 {
			t.Fatalf("changed step %+v", fc.Step)
		}
		if _, err := json.Marshal(fc); err != nil {
			t.Fatal(err)
		}
	})
}
