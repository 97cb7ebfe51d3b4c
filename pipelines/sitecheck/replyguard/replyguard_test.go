package replyguard

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormRuneKeepsLength(t *testing.T) {
	in := "We\u2019re \u201cgreat\u201d\u2014call\u00a0now\u2026 \uff15\uff10\uff05 \u00a35\r\n\u2028x"
	want := "We're \"great\"-call now. 50% $5\n\n\nx"
	a := analyse(in)
	if got := string(a.norm); got != want {
		t.Errorf("norm = %q; want %q", got, want)
	}
	if len(a.norm) != utf8.RuneCountInString(in) || len(a.scanCase) != len(a.norm) || len(a.scanLower) != len(a.norm) {
		t.Errorf("lengths differ: runes %d norm %d scan %d %d", utf8.RuneCountInString(in), len(a.norm), len(a.scanCase), len(a.scanLower))
	}
}

func TestScanStrings(t *testing.T) {
	a := analyse("Café 😀 Ωmega ✓ 東京 ABC")
	if a.scanCase != "Cafa   amega   aa ABC" {
		t.Errorf("scanCase = %q", a.scanCase)
	}
	if a.scanLower != "cafa   amega   aa abc" {
		t.Errorf("scanLower = %q", a.scanLower)
	}
}

func TestTokenize(t *testing.T) {
	a := analyse("That\u2019s 3pm—Dr. O’Brien’s café, x-ray 😀 東京ラーメン B12")
	var got []string
	for _, tk := range a.toks {
		got = append(got, tk.lower)
	}
	want := []string{"that", "s", "3", "pm", "dr", "o", "brien", "s", "café", "x", "ray", "東京ラーメン", "b", "12"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokens = %q\nwant %q", got, want)
	}
	// Offsets are code points: the emoji counts as one.
	for _, tk := range a.toks {
		if string(a.orig[tk.start:tk.end]) != tk.text {
			t.Errorf("token %q at %d..%d reads %q in the original", tk.text, tk.start, tk.end, string(a.orig[tk.start:tk.end]))
		}
	}
	last := a.toks[len(a.toks)-1]
	if last.start != 47 || last.end != 49 {
		t.Errorf("B12 number at %d..%d; want 47..49", last.start, last.end)
	}
}

func TestOffsetsAreCodePoints(t *testing.T) {
	reply := "😀😀 “Thanks” — call 555-123-4567 é"
	r := Check(Input{Review: "ok", Rating: 3, BusinessName: "Shop", Reply: reply})
	if len(r.Problems) != 1 {
		t.Fatalf("problems = %+v", r.Problems)
	}
	p := r.Problems[0]
	if p.Start != 19 || p.End != 31 || p.Phrase != "555-123-4567" {
		t.Errorf("problem = %+v; want 19..31", p)
	}
	if got := string([]rune(reply)[p.Start:p.End]); got != p.Phrase {
		t.Errorf("runes[%d:%d] = %q", p.Start, p.End, got)
	}
}

func TestCurlyQuotesMatchPhrases(t *testing.T) {
	for _, reply := range []string{"That's not true.", "That\u2019s not true.", "That\u02bcs not true.", "THAT'S NOT TRUE."} {
		r := Check(Input{Review: "bad", Rating: 1, BusinessName: "Shop", Reply: reply})
		if len(r.Problems) != 1 || r.Problems[0].Code != CodeArguing || r.Problems[0].End != 15 {
			t.Errorf("%q: %+v", reply, r.Problems)
		}
	}
}

// TestListsAreTokenised checks that every phrase is written as the
// tokeniser splits it, in lower case, and that no phrase is listed twice.
func TestListsAreTokenised(t *testing.T) {
	lists := map[string][]phraseEntry{
		"offer": offerPhrases, "arguing": arguingPhrases, "placeholder": placeholderPhrases,
		"phi": phiPhrases, "health": healthKeywords, "vet": veterinaryWords,
	}
	for name, list := range lists {
		seen := map[string]bool{}
		for _, e := range list {
			p := strings.Join(e.words, " ")
			if seen[p] {
				t.Errorf("%s: %q listed twice", name, p)
			}
			seen[p] = true
			var got []string
			for _, tk := range analyse(p).toks {
				got = append(got, tk.lower)
			}
			if !reflect.DeepEqual(got, e.words) || lowerString(p) != p {
				t.Errorf("%s: %q tokenises to %q", name, p, got)
			}
			if _, ok := phiMessages[e.cat]; name == "phi" && e.cat != "" && !ok {
				t.Errorf("phi: %q has category %q without a message", p, e.cat)
			}
		}
	}
	for _, set := range []map[string]bool{commonWords, englishWords, foreignWords, titles, starWords} {
		for w := range set {
			if lowerString(w) != w || len(analyse(w).toks) != 1 {
				t.Errorf("word %q is not one lower-case token", w)
			}
		}
	}
}

func TestProblemsSortedAndBlockedDeduplicated(t *testing.T) {
	r := Check(Input{Review: "x", Rating: 1, BusinessName: "Shop", Reply: "Call XXX or XXX, free, free."})
	want := []string{"XXX", "free"}
	if !reflect.DeepEqual(r.Blocked, want) || r.OK {
		t.Errorf("blocked = %q ok %v", r.Blocked, r.OK)
	}
	if !sort.SliceIsSorted(r.Problems, func(i, j int) bool { return r.Problems[i].Start < r.Problems[j].Start }) {
		t.Errorf("problems out of order: %+v", r.Problems)
	}
}

func TestWarningsKeepOK(t *testing.T) {
	r := Check(Input{Review: "cold", Rating: 2, BusinessName: "Shop", Reply: "You are wrong, we have been open 30 years."})
	if !r.OK || len(r.Problems) != 2 || len(r.Blocked) != 0 {
		t.Errorf("%+v", r)
	}
}

// TestSafeReplyPasses checks the fallback reply against every business of
// the fixtures, with each fixture's review: no problem at all, except the
// English-only refusal when the review itself is not English.
func TestSafeReplyPasses(t *testing.T) {
	for _, c := range loadFixtures(t, "check_reply.json") {
		var in struct {
			Review       string `json:"review"`
			Rating       int    `json:"rating"`
			BusinessName string `json:"business_name"`
			BusinessType string `json:"business_type"`
		}
		if err := json.Unmarshal(c.Input, &in); err != nil {
			t.Fatal(err)
		}
		for _, hc := range []bool{IsHealthcare(in.BusinessName, in.BusinessType), true, false} {
			reply := SafeReply(in.BusinessName, hc)
			r := Check(Input{Review: in.Review, Rating: in.Rating, BusinessName: in.BusinessName, BusinessType: in.BusinessType, Reply: reply})
			probs := r.Problems
			if len(probs) == 1 && probs[0].Code == CodeNonEnglish && probs[0].Message == msgNonEnglishReview {
				continue
			}
			if len(probs) != 0 {
				t.Errorf("%s (healthcare %v): safe reply has problems %+v", c.Name, hc, probs)
			}
		}
	}
	if SafeReply("X", true) == SafeReply("X", false) {
		t.Error("the health and general safe replies should differ")
	}
}

func TestKitErrors(t *testing.T) {
	f := KitFunctions()
	cases := []struct {
		fn, in, want string
	}{
		{"checkReply", `{"review":"a","rating":5,"business_name":"B","reply":"r","extra":1}`, `unknown field "extra"`},
		{"checkReply", `{"rating":5,"business_name":"B","reply":"r"}`, `"review" is required`},
		{"checkReply", `{"review":null,"rating":5,"business_name":"B","reply":"r"}`, `"review" is required`},
		{"checkReply", `{"review":"a","business_name":"B","reply":"r"}`, `"rating" is required`},
		{"checkReply", `{"review":"a","rating":6,"business_name":"B","reply":"r"}`, `whole number from 1 to 5, not 6`},
		{"checkReply", `{"review":"a","rating":4.5,"business_name":"B","reply":"r"}`, `not 4.5`},
		{"checkReply", `{"review":"a","rating":"5","business_name":"B","reply":"r"}`, `not "5"`},
		{"checkReply", `{"review":"a","rating":5,"business_name":" ","reply":"r"}`, `"business_name" is required`},
		{"checkReply", `{"review":"a","rating":5,"business_name":"B"}`, `"reply" is required`},
		{"checkReply", `{"review":1,"rating":5,"business_name":"B","reply":"r"}`, `"review" must be a string`},
		{"checkReply", `[1]`, `must be a JSON object`},
		{"checkReply", `{"review":"a","rating":5,"business_name":"B","reply":"r"} {}`, `unexpected data`},
		{"checkReply", `{"review":"a",`, `not valid JSON`},
		{"isHealthcareBusiness", `{"business_type":"Dentist"}`, `"business_name" is required`},
		{"isHealthcareBusiness", `{"business_name":"A","type":"x"}`, `unknown field "type"`},
		{"isHealthcareBusiness", `{"business_name":"A","business_type":7}`, `"business_type" must be a string`},
	}
	for _, c := range cases {
		_, err := f[c.fn](json.RawMessage(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), c.fn+": ") {
			t.Errorf("%s %s: err %v; want it to contain %q", c.fn, c.in, err, c.want)
		}
	}
	ok := []string{
		`{"review":"","rating":5.0,"business_name":"B","business_type":null,"reply":"Thanks!"}`,
		`{"review":"a","rating":1,"business_name":"B","business_type":"Dentist","reply":""}`,
	}
	for _, in := range ok {
		if _, err := f["checkReply"](json.RawMessage(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	if v, err := f["isHealthcareBusiness"](json.RawMessage(`{"business_name":"","business_type":null}`)); err != nil || v != false {
		t.Errorf("empty name: %v %v", v, err)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("Waited 3 hours", 1, "Bright Smile Dental", "Dentist", "Hi Sarah, sorry for your 3 hour wait; call 555-123-4567.")
	f.Add("Great pizza", 5, "Tony's Pizza", "", "Thanks for the 5 stars! [Name] free dessert at tonyspizza.com")
	f.Add("Très bien", 4, "Le Café", "Restaurant", "Merci beaucoup! 😀 Dr. O’Brien")
	f.Add("", 3, "", "", "\u00a0\u2028")
	f.Add("x", 2, "Studio 54", "MedicalClinic", "{{a}} <b> XXX 12 Main St. +1 (555) 010-2030 a@b.co 24/7 $5 off")
	f.Fuzz(func(t *testing.T, review string, rating int, name, btype, reply string) {
		in := Input{Review: review, Rating: rating, BusinessName: name, BusinessType: btype, Reply: reply}
		r1 := Check(in)
		r2 := Check(in)
		if !reflect.DeepEqual(r1, r2) {
			t.Fatalf("not deterministic: %+v vs %+v", r1, r2)
		}
		runes := []rune(reply)
		clean := string(runes)
		blocks := false
		for i, p := range r1.Problems {
			if p.Start < 0 || p.Start > p.End || p.End > len(runes) {
				t.Fatalf("offsets %d..%d outside a reply of %d code points", p.Start, p.End, len(runes))
			}
			if p.Phrase != string(runes[p.Start:p.End]) {
				t.Fatalf("phrase %q is not runes[%d:%d]", p.Phrase, p.Start, p.End)
			}
			if p.Severity != SeverityBlock && p.Severity != SeverityWarn {
				t.Fatalf("severity %q", p.Severity)
			}
			blocks = blocks || p.Severity == SeverityBlock
			if i > 0 {
				q := r1.Problems[i-1]
				if q.Start > p.Start || (q.Start == p.Start && q.Code > p.Code) {
					t.Fatalf("problems out of order: %+v then %+v", q, p)
				}
			}
		}
		if r1.OK == blocks {
			t.Fatalf("ok %v with block problems %v", r1.OK, blocks)
		}
		seen := map[string]bool{}
		for _, b := range r1.Blocked {
			if b == "" || !strings.Contains(clean, b) || seen[b] {
				t.Fatalf("blocked phrase %q is empty, repeated or not in the reply", b)
			}
			seen[b] = true
		}
		if r1.Problems == nil || r1.Blocked == nil {
			t.Fatal("nil lists")
		}
	})
}
