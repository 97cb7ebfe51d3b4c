package audit

import (
	"encoding/hex"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The statistics of the identity lane (README "Endpoint audit", docs/
// decisions.md): every golden and canary is greedy, so the claimed weights
// on any stack give the fixture's tokens up to the stack's numerical
// noise. Per probe the audit measures
//
//   - exact: the answer is the fixture's, character for character;
//   - first: the answer starts with the fixture's first token;
//   - logprob delta: where both sides give logprobs, the mean |Δ logprob|
//     of the chosen tokens over the common token prefix (position 0
//     always counts: the prompt is the same), the test of numerics;
//   - top overlap: the share of the fixture's top-5 alternatives at
//     position 0 that the target's top-5 also holds.
//
// and classifies (classify) against the fixture's measured noise.
const (
	// PassLogprobFloor is the least logprob delta a pass allows, however
	// quiet the reference stack was (nats): the same weights on another
	// build of the same kernels differ by about 1e-5.
	PassLogprobFloor = 0.005
	// PassNoiseFactor widens the reference's measured logprob spread.
	PassNoiseFactor = 4
	// PassExactSlack is the share of answers that may differ from the
	// fixture beyond its measured exact share (ties broken otherwise on
	// other hardware): 2 of 14.
	PassExactSlack = 0.15
	// DriftLogprobMax is the largest logprob delta that is still the same
	// weights at other numerics (quantisation moves logprobs by a few
	// hundredths of a nat; other weights by far more).
	DriftLogprobMax = 0.5
	// DriftFirstMin is the least share of answers starting with the
	// fixture's first token for drift (a greedy first token survives
	// quantisation; other weights pick another).
	DriftFirstMin = 0.6
	// DriftOverlapMin is the least top-5 overlap at position 0 for drift
	// (with logprobs).
	DriftOverlapMin = 0.5
	// DriftPrefixMin is the least mean common prefix, as a share of the
	// fixture's answer, for drift without logprobs.
	DriftPrefixMin = 0.3
	// ErrorShareMax is the largest share of failed probes a verdict is
	// given for; more is inconclusive.
	ErrorShareMax = 0.25
	// QualityDropMax is the largest drop in a quality score (share of the
	// category's probes) before the quality lane says drift.
	QualityDropMax = 0.34
)

// identity is the comparison of a target's goldens and canaries with the
// fixture.
type identity struct {
	n, errors         int
	exact, first      float64 // shares of the answered probes
	prefix            float64 // mean common prefix, share of the fixture's answer
	lp                float64 // mean |Δ logprob| (lpN probes had logprobs on both sides)
	lpN               int
	overlap           float64 // mean top-5 overlap at position 0 (lpN probes)
	missingReferences int
}

// compareIdentity compares answers (in the order of probes) with f.
func compareIdentity(f *Fixture, probes []Probe, answers []answer) identity {
	var c identity
	var exact, first, prefix, lp, overlap float64
	answered := 0
	for i, p := range probes {
		c.n++
		a := answers[i]
		if a.err != nil {
			c.errors++
			continue
		}
		ref := f.probe(p.ID)
		if ref == nil || ref.Error != "" {
			c.missingReferences++
			continue
		}
		answered++
		pe, pf, pp, tokens := compareAnswer(ref, a.rep)
		if pe {
			exact++
		}
		if pf {
			first++
		}
		prefix += pp
		if tokens {
			d, ov := logprobDelta(ref.Tokens, a.rep.Tokens)
			lp += d
			overlap += ov
			c.lpN++
		}
	}
	if answered > 0 {
		c.exact, c.first, c.prefix = exact/float64(answered), first/float64(answered), prefix/float64(answered)
	}
	if c.lpN > 0 {
		c.lp, c.overlap = lp/float64(c.lpN), overlap/float64(c.lpN)
	}
	return c
}

// compareAnswer compares one answer with the fixture's: identical,
// starting with the same first token, the common prefix as a share of the
// fixture's answer, and whether tokens were compared. With tokens on both
// sides the comparison is token by token (bytes) up to the first
// byte-fallback piece, where engines' renderings part (a stream that holds
// an undecodable byte may drop the pieces after it); else on the
// normalised text.
func compareAnswer(ref *FixtureProbe, rep Reply) (exact, first bool, prefix float64, tokens bool) {
	exact, first, prefix, tokens = compareText(ref, rep)
	// An answer of another length or ending (cut short, run on) is not the
	// fixture's, whatever its start, when both sides say.
	if ref.CompletionTokens > 0 && rep.CompletionTokens > 0 && ref.CompletionTokens != rep.CompletionTokens ||
		ref.Finish != "" && rep.Finish != "" && ref.Finish != rep.Finish {
		exact = false
	}
	return exact, first, prefix, tokens
}

func compareText(ref *FixtureProbe, rep Reply) (exact, first bool, prefix float64, tokens bool) {
	got := Normalize(rep.Text)
	if len(ref.Tokens) > 0 {
		r, rCut := comparable(ref.Tokens)
		if len(r) > 0 {
			refText := Normalize(joined(r))
			if len(rep.Tokens) > 0 {
				g, gCut := comparable(rep.Tokens)
				m := 0
				for m < len(r) && m < len(g) && tokenKey(r[m].Hex, r[m].Text) == tokenKey(g[m].Hex, g[m].Text) {
					m++
				}
				exact = m == len(r) && m == len(g) || m == min(len(r), len(g)) && (rCut && len(g) >= len(r) || gCut && len(r) >= len(g))
				// The text must say what the tokens say (an answer cut or
				// rewritten after its logprobs were taken is not identical).
				if exact && !strings.HasPrefix(got, Normalize(joined(g[:m]))) {
					exact = false
				}
				return exact, m > 0, float64(m) / float64(len(r)), true
			}
			// Text only: the fixture's answer up to its first byte-fallback
			// piece, where the endpoint's rendering may part.
			if rCut {
				exact = strings.HasPrefix(got, refText)
			} else {
				exact = got == Normalize(ref.Text)
			}
			ft := Normalize(r[0].Text)
			return exact, ft == "" || strings.HasPrefix(got, ft), float64(commonPrefix(got, refText)) / float64(max(len(refText), 1)), false
		}
	}
	want := Normalize(ref.Text)
	ft := Normalize(firstToken(ref))
	return got == want, ft == "" || strings.HasPrefix(got, ft), float64(commonPrefix(got, want)) / float64(max(len(want), 1)),
		len(ref.Tokens) > 0 && len(rep.Tokens) > 0
}

// joined is the tokens' text.
func joined(ts []Token) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(t.Text)
	}
	return b.String()
}

// comparable is the visible tokens up to the first byte-fallback piece,
// and whether one cut them.
func comparable(ts []Token) ([]Token, bool) {
	vis := visible(ts)
	for i, t := range vis {
		if tokenKey(t.Hex, t.Text) == "byte" {
			return vis[:i], true
		}
	}
	return vis, false
}

// firstToken is the fixture answer's first token text (from its logprobs),
// else its first word.
func firstToken(p *FixtureProbe) string {
	if len(p.Tokens) > 0 {
		return p.Tokens[0].Text
	}
	t := p.Text
	if i := strings.IndexAny(strings.TrimLeft(t, " "), " \n"); i > 0 {
		return t[:i+len(t)-len(strings.TrimLeft(t, " "))]
	}
	return t
}

// controlMarker is a control token written as text (<|im_start|>):
// engines differ in whether they render them.
var controlMarker = regexp.MustCompile(`<\|[A-Za-z0-9_]{1,40}\|>`)

// Normalize is the text greedy answers are compared on: undecodable bytes
// and U+FFFD dropped (engines render byte-fallback pieces differently:
// raw, replaced or left out) and <|…|> control markers removed (some
// engines write them, others render them empty).
func Normalize(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.ReplaceAll(s, "\ufffd", "")
	return controlMarker.ReplaceAllString(s, "")
}

// tokenKey is what identifies a generated token across engines: its bytes
// when given, else its text. A byte-fallback piece (one byte of a UTF-8
// sequence) is one key whatever its byte: engines report it as the raw
// byte, as U+FFFD or as nothing.
func tokenKey(hexBytes, text string) string {
	if Normalize(text) == "" && (len(hexBytes) == 2 && hexBytes >= "80" || hexBytes == "efbfbd" || hexBytes == "" && text != "") {
		return "byte"
	}
	if hexBytes != "" {
		return hexBytes
	}
	return hex.EncodeToString([]byte(text))
}

// visible drops the tokens with no text and no bytes (control tokens some
// engines list and others leave out).
func visible(ts []Token) []Token {
	out := make([]Token, 0, len(ts))
	for _, t := range ts {
		if t.Text != "" || t.Hex != "" {
			out = append(out, t)
		}
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// logprobDelta is the mean |Δ logprob| of the chosen tokens over the
// common token prefix (position 0 always), and the share of the
// reference's top alternatives at position 0 the target also lists.
func logprobDelta(ref, got []Token) (float64, float64) {
	ref, got = visible(ref), visible(got)
	if len(ref) == 0 || len(got) == 0 {
		return 0, 1
	}
	ref0, got0 := ref[0], got[0]
	ref, _ = comparable(ref)
	got, _ = comparable(got)
	if len(ref) == 0 || len(got) == 0 {
		// The answer opens with a byte-fallback piece: position 0 alone.
		ref, got = []Token{ref0}, []Token{got0}
	}
	var sum float64
	n := 0
	for i := 0; i < len(ref) && i < len(got); i++ {
		rk, gk := tokenKey(ref[i].Hex, ref[i].Text), tokenKey(got[i].Hex, got[i].Text)
		if rk != gk {
			// Another token chosen: its logprob in the reference's top
			// list, else the reference's smallest listed logprob bounds it.
			sum += math.Abs(ref[i].Logprob - lookup(ref[i].Top, gk, ref[i].Logprob))
			n++
			break
		}
		sum += math.Abs(ref[i].Logprob - got[i].Logprob)
		n++
	}
	set := map[string]bool{}
	for _, t := range got0.Top {
		set[tokenKey(t.Hex, t.Text)] = true
	}
	hit := 0
	for _, t := range ref0.Top {
		if set[tokenKey(t.Hex, t.Text)] {
			hit++
		}
	}
	ov := 1.0
	if len(ref0.Top) > 0 {
		ov = float64(hit) / float64(len(ref0.Top))
	}
	return sum / float64(max(n, 1)), ov
}

// lookup is the logprob of the token keyed key in top, else the lowest
// listed (or def).
func lookup(top []TopToken, key string, def float64) float64 {
	low := def
	for _, t := range top {
		if tokenKey(t.Hex, t.Text) == key {
			return t.Logprob
		}
		low = math.Min(low, t.Logprob)
	}
	return low
}

// Verdicts.
const (
	VerdictPass         = "pass"
	VerdictDrift        = "drift"
	VerdictFail         = "fail"
	VerdictInconclusive = "inconclusive"
)

// thresholds are the pass bounds a fixture's noise gives.
type thresholds struct {
	passLP, passExact float64
}

func thresholdsOf(n Noise) thresholds {
	t := thresholds{passLP: PassLogprobFloor, passExact: 1 - PassExactSlack}
	if v, err := strconv.ParseFloat(n.LogprobDelta, 64); err == nil {
		t.passLP = math.Max(PassLogprobFloor, PassNoiseFactor*v)
	}
	if v, err := strconv.ParseFloat(n.Exact, 64); err == nil {
		t.passExact = v - PassExactSlack
	}
	return t
}

// classify is the identity verdict of c and why.
func classify(c identity, t thresholds) (string, []string) {
	if c.n == 0 {
		return VerdictInconclusive, []string{"no identity probe was answered"}
	}
	if float64(c.errors)/float64(c.n) > ErrorShareMax {
		return VerdictInconclusive, []string{pct(c.errors, c.n) + " of the identity probes failed (more than " + fig(ErrorShareMax) + " of them)"}
	}
	lp := c.lpN > 0
	switch {
	case c.exact >= t.passExact && (!lp || c.lp <= t.passLP):
		r := "greedy answers match the fixture (" + fig(c.exact) + " identical"
		if lp {
			r += ", mean |Δ logprob| " + fig(c.lp) + " ≤ " + fig(t.passLP)
		} else {
			r += "; the endpoint gave no logprobs, so numerics were not compared"
		}
		return VerdictPass, []string{r + ")"}
	case lp && c.lp <= DriftLogprobMax && c.first >= DriftFirstMin && c.overlap >= DriftOverlapMin:
		return VerdictDrift, []string{"same family, other numerics: first tokens agree on " + fig(c.first) + " of the probes and the top-5 alternatives on " +
			fig(c.overlap) + ", but the mean |Δ logprob| " + fig(c.lp) + " is outside the reference's spread (≤ " + fig(t.passLP) + ")" + exactNote(c)}
	case !lp && c.first >= DriftFirstMin && c.prefix >= DriftPrefixMin:
		return VerdictDrift, []string{"same family, other numerics: first tokens agree on " + fig(c.first) + " of the probes, but only " +
			fig(c.exact) + " of the greedy answers are identical (≥ " + fig(t.passExact) + " needed)"}
	}
	r := "not the claimed weights: first tokens agree on " + fig(c.first) + " of the probes (≥ " + fig(DriftFirstMin) + " for the same family)"
	if lp {
		r += ", mean |Δ logprob| " + fig(c.lp) + ", top-5 overlap " + fig(c.overlap)
	}
	return VerdictFail, []string{r}
}

func exactNote(c identity) string {
	return "; " + fig(c.exact) + " of the greedy answers are identical"
}

// fig writes a figure as signed documents carry it: a decimal string of at
// most four places.
func fig(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	s := strconv.FormatFloat(v, 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

func pct(k, n int) string { return strconv.Itoa(k) + " of " + strconv.Itoa(n) }
