package testmodels

import (
	"regexp"
	"sort"
	"strings"
)

// corpus is the text the test tokenizers learn their merges from: the kind
// of words boxd's routes see (clinic, sales, inspection, JSON).
const corpus = `The patient reports lower back pain for three days after lifting a heavy box at work.
No numbness or weakness in the legs. Pain is worse when bending and better with rest.
Blood pressure is 128 over 82, heart rate 76, temperature 37.1 degrees.
Assessment: lumbar strain. Plan: ibuprofen 400 mg three times a day with food, heat, gentle walking, follow up in two weeks.
The doctor asked about diabetes, blood sugar, insulin, metformin and the last A1c result.
We discussed the renewal, the security review, pricing per seat, the integration timeline and the decision makers.
The buyer asked about shipping logistics, delivery windows, warehouse locations and support hours.
Next question: what would make this project a success for your team this quarter?
The roof inspection found cracked shingles on the north side, a missing flashing near the chimney and clogged gutters.
The electrical panel has a double tapped breaker, no labels on circuits and a missing cover screw.
Measure the outlet voltage: 120 volts, within spec. Check the ground fault outlets in the kitchen and bathroom.
Translate the repair instructions into Spanish: la puerta, la ventana, el techo, la cocina, gracias.
{"name": "value", "items": [1, 2, 3], "ok": true, "note": null, "score": 0.5}
{"title": "Report", "summary": "All checks passed.", "severity": "minor", "priority": "low"}
function call arguments: {"location": "Boston", "unit": "celsius"} result: {"temperature": 21}
Hello, how can I help you today? Thank you. Yes. No. Please explain the next step.
Once upon a time there was a little robot who liked to count: one, two, three, four, five, six, seven, eight, nine, ten.`

// bytesToUnicode is GPT-2's byte-to-character map: printable bytes map to
// themselves, the others to characters from U+0100 on, so every byte is a
// visible character in token strings.
func bytesToUnicode() [256]rune {
	var m [256]rune
	var bs []int
	for b := '!'; b <= '~'; b++ {
		bs = append(bs, int(b))
	}
	for b := 0xA1; b <= 0xAC; b++ {
		bs = append(bs, b)
	}
	for b := 0xAE; b <= 0xFF; b++ {
		bs = append(bs, b)
	}
	in := map[int]bool{}
	for _, b := range bs {
		in[b] = true
		m[b] = rune(b)
	}
	n := 0
	for b := range 256 {
		if !in[b] {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}

// preTokenize approximates GPT-2's split of text into words.
var preTokenize = regexp.MustCompile(`'s|'t|'re|'ve|'m|'ll|'d| ?\pL+| ?\pN+| ?[^\s\pL\pN]+|\s+`)

// bpe is a byte-level BPE vocabulary: tokens (byte characters first, then
// merged tokens) and merges in rank order.
type bpe struct {
	tokens []string
	merges []string
}

// trainBPE learns up to nMerges merges from text, deterministically.
func trainBPE(text string, nMerges int) bpe {
	b2u := bytesToUnicode()
	var out bpe
	for b := range 256 {
		out.tokens = append(out.tokens, string(b2u[b]))
	}
	// Words as symbol sequences, with counts.
	counts := map[string]int{}
	for _, w := range preTokenize.FindAllString(text, -1) {
		var sb strings.Builder
		for _, c := range []byte(w) {
			sb.WriteRune(b2u[c])
		}
		counts[sb.String()]++
	}
	type word struct {
		syms  []string
		count int
	}
	var words []word
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var syms []string
		for _, r := range k {
			syms = append(syms, string(r))
		}
		words = append(words, word{syms: syms, count: counts[k]})
	}
	seen := map[string]bool{}
	for _, t := range out.tokens {
		seen[t] = true
	}
	for len(out.merges) < nMerges {
		pairs := map[[2]string]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w.syms); i++ {
				pairs[[2]string{w.syms[i], w.syms[i+1]}] += w.count
			}
		}
		var best [2]string
		bestN := 0
		for p, n := range pairs {
			if n > bestN || (n == bestN && p[0]+" "+p[1] < best[0]+" "+best[1]) {
				best, bestN = p, n
			}
		}
		if bestN < 2 {
			break
		}
		merged := best[0] + best[1]
		out.merges = append(out.merges, best[0]+" "+best[1])
		if !seen[merged] {
			seen[merged] = true
			out.tokens = append(out.tokens, merged)
		}
		for wi := range words {
			syms := words[wi].syms
			var next []string
			for i := 0; i < len(syms); i++ {
				if i+1 < len(syms) && syms[i] == best[0] && syms[i+1] == best[1] {
					next = append(next, merged)
					i++
				} else {
					next = append(next, syms[i])
				}
			}
			words[wi].syms = next
		}
	}
	return out
}

// wordPieces is a WordPiece vocabulary in llama.cpp's phantom-space form:
// word-initial pieces start with U+2581, continuations are bare.
func wordPieces(text string, n int) []string {
	counts := map[string]int{}
	for _, w := range regexp.MustCompile(`\pL+|\pN+`).FindAllString(strings.ToLower(text), -1) {
		counts[w]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, c := range "abcdefghijklmnopqrstuvwxyz0123456789" {
		add("\u2581" + string(c))
		add(string(c))
	}
	for _, c := range ".,:;!?'\"()[]{}-+/*=%$&#@" {
		add("\u2581" + string(c))
	}
	for _, k := range keys {
		if len(out) >= n {
			break
		}
		add("\u2581" + k)
	}
	return out
}
