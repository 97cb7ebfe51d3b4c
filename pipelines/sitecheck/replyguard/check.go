package replyguard

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// MaxReplyLength is the longest reply, in code points, that passes without
// a too_long warning.
const MaxReplyLength = 1000

// Problem codes.
const (
	CodeEmpty           = "empty"
	CodeTooLong         = "too_long"
	CodeNonEnglish      = "non_english"
	CodeOffer           = "offer"
	CodeContactDetail   = "contact_detail"
	CodeNumberNotGiven  = "number_not_given"
	CodePlaceholder     = "placeholder"
	CodeArguing         = "arguing"
	CodePHIConfirmation = "phi_confirmation"
)

// Severities. A reply with any block problem must not be posted.
const (
	SeverityBlock = "block"
	SeverityWarn  = "warn"
)

// Messages. They are part of the fixtures: ports copy them verbatim.
const (
	msgEmpty            = "the reply is empty; write a reply before posting it"
	msgTooLong          = "the reply is longer than 1000 characters; shorten it"
	msgNonEnglishReview = "the review is not in English; the reply guard checks English only"
	msgNonEnglishReply  = "the reply is not in English; the reply guard checks English only"
	msgNonEnglishBoth   = "the review and the reply are not in English; the reply guard checks English only"
	msgOffer            = "offers a discount, refund, free service or other compensation in public; make any offer privately"
	msgNumberNotGiven   = "mentions a number the review does not contain"
	msgPlaceholder      = "contains a placeholder that must be filled in or removed"
	msgArguing          = "argues with or blames the reviewer; acknowledge the feedback instead"
	contactKindEmail    = "email"
	contactKindURL      = "url"
	contactKindPhone    = "phone"
	contactKindAddress  = "address"
	phoneSeparatorChars = " .-"
	nameJoinChars       = " -'"
	titleGapChars       = ". "
	sentenceEndChars    = ".!?\n"
)

var contactMessages = map[string]string{
	contactKindEmail:   "gives an email address the review does not contain",
	contactKindURL:     "gives a web address the review does not contain",
	contactKindPhone:   "gives a phone number the review does not contain",
	contactKindAddress: "gives a street address the review does not contain",
}

// The regexes run on the ASCII scan strings (see text.go). They use no
// flags, no \b, \s, \d or \w, no look-around and no anchors, so RE2,
// JavaScript and Python find the same leftmost-first matches.
var (
	reEmail = regexp.MustCompile(`[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}`)
	reURL   = regexp.MustCompile(`(?:https?://|www\.)[a-z0-9-]+(?:\.[a-z0-9-]+)*(?:/[a-z0-9._~/?#=&%+-]*[a-z0-9_~/#=&%+-])?` +
		`|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|edu|gov|info|biz|io|co|us|uk|ca|au|health|dental|care|clinic|dentist|doctor|app|site|online)(?:/[a-z0-9._~/?#=&%+-]*[a-z0-9_~/#=&%+-])?`)
	rePhone   = regexp.MustCompile(`(?:\+[0-9]+[ .-]?)?(?:\([0-9]+\)[ .-]?)?[0-9]+(?:[ .-][0-9]+)*`)
	reAddress = regexp.MustCompile(`[0-9]{1,6} (?:[A-Z][A-Za-z0-9.'-]* ){1,4}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Drive|Dr|Lane|Ln|Way|Court|Ct|Place|Pl|Parkway|Pkwy|Highway|Hwy|Terrace|Circle|Square|Sq)[^A-Za-z0-9]`)
	reNumber  = regexp.MustCompile(`[0-9]+(?:[.,:/][0-9]+)*`)
	reOffer   = regexp.MustCompile(`(?:\$ ?[0-9]+(?:[.,][0-9]+)*|[0-9]+(?:\.[0-9]+)? ?(?:%|percent)) ?off`)
	reBracket = regexp.MustCompile(`\{\{[^{}\n]{0,60}\}\}|\{[^{}\n]{1,60}\}|\[[^\[\]\n]{1,60}\]|<[^<>\n]{1,60}>`)
	reCaps    = regexp.MustCompile(`XXX+|TODO|TBD|FIXME|TKTK`)
)

// Input is one reply to check.
type Input struct {
	Review       string
	Rating       int
	BusinessName string
	BusinessType string
	Reply        string
}

// Problem is one finding. Start and End are code point offsets into the
// reply (End exclusive); Phrase is the reply's text between them. Problems
// about the whole text (empty, too_long, non_english) have 0, 0 and "".
type Problem struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Phrase   string `json:"phrase"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
}

// Result is the guard's answer. OK is true when no problem has severity
// block; Blocked lists the phrases of block problems in order, once each.
type Result struct {
	OK         bool      `json:"ok"`
	Healthcare bool      `json:"healthcare"`
	Problems   []Problem `json:"problems"`
	Blocked    []string  `json:"blocked"`
}

type contact struct {
	s     span
	kind  string
	canon string
}

type number struct {
	s     span
	canon string
}

type candidate struct {
	s   span
	cat string
}

// Check runs the reply guard. It is deterministic and calls no model.
func Check(in Input) Result {
	hc := IsHealthcare(in.BusinessName, in.BusinessType)
	rp := analyse(in.Reply)
	var probs []Problem
	add := func(code, sev, msg string, s span) {
		probs = append(probs, Problem{Code: code, Severity: sev, Message: msg, Phrase: rp.phrase(s.start, s.end), Start: s.start, End: s.end})
	}
	if rp.blank() {
		add(CodeEmpty, SeverityBlock, msgEmpty, span{})
		return finish(hc, probs)
	}
	rv := analyse(in.Review)
	bz := analyse(in.BusinessName)
	bizWords := map[string]bool{}
	for _, tk := range bz.toks {
		bizWords[tk.lower] = true
	}

	// Whole-text checks.
	if len(rp.orig) > MaxReplyLength {
		add(CodeTooLong, SeverityWarn, msgTooLong, span{})
	}
	revNon, repNon := nonEnglish(rv, bizWords), nonEnglish(rp, bizWords)
	switch {
	case revNon && repNon:
		add(CodeNonEnglish, SeverityBlock, msgNonEnglishBoth, span{})
	case revNon:
		add(CodeNonEnglish, SeverityBlock, msgNonEnglishReview, span{})
	case repNon:
		add(CodeNonEnglish, SeverityBlock, msgNonEnglishReply, span{})
	}

	// Contact details.
	givenContacts := map[string]bool{}
	for _, c := range findContacts(rv) {
		givenContacts[c.kind+" "+c.canon] = true
	}
	bizContacts := map[string]bool{}
	for _, c := range findContacts(bz) {
		bizContacts[c.kind+" "+c.canon] = true
	}
	var contactSpans []span
	var phiRepeatContacts []candidate
	for _, c := range findContacts(rp) {
		contactSpans = append(contactSpans, c.s)
		key := c.kind + " " + c.canon
		switch {
		case bizContacts[key]:
		case givenContacts[key]:
			if hc {
				phiRepeatContacts = append(phiRepeatContacts, candidate{c.s, catRepeatContact})
			}
		default:
			add(CodeContactDetail, SeverityBlock, contactMessages[c.kind], c.s)
		}
	}

	// Tokens inside a mention of the business name or inside a contact
	// detail take no part in phrase, name or number-word matching.
	masked := make([]bool, len(rp.toks))
	if m := len(bz.toks); m > 0 {
		for i := 0; i+m <= len(rp.toks); {
			ok := true
			for k := 0; k < m; k++ {
				if rp.toks[i+k].lower != bz.toks[k].lower {
					ok = false
					break
				}
			}
			if !ok {
				i++
				continue
			}
			for k := 0; k < m; k++ {
				masked[i+k] = true
			}
			i += m
		}
	}
	for i, tk := range rp.toks {
		if overlapsAny(span{tk.start, tk.end}, contactSpans) {
			masked[i] = true
		}
	}
	phraseSpan := func(m phraseMatch) span { return span{rp.toks[m.first].start, rp.toks[m.last].end} }

	// Placeholders.
	var ph []span
	for _, s := range findAll(reBracket, rp.scanCase) {
		ph = acceptSpan(ph, s)
	}
	for _, s := range findAll(reCaps, rp.scanCase) {
		if !alnumBefore(rp.scanCase, s) && !alnumAfter(rp.scanCase, s) {
			ph = acceptSpan(ph, s)
		}
	}
	for _, m := range scanPhrases(rp.toks, masked, placeholderPhrases) {
		ph = acceptSpan(ph, phraseSpan(m))
	}
	for _, s := range ph {
		add(CodePlaceholder, SeverityBlock, msgPlaceholder, s)
	}

	// Offers.
	var offers []span
	for _, s := range findAll(reOffer, rp.scanLower) {
		if !alnumAfter(rp.scanLower, s) {
			offers = acceptSpan(offers, s)
		}
	}
	for _, m := range scanPhrases(rp.toks, masked, offerPhrases) {
		offers = acceptSpan(offers, phraseSpan(m))
	}
	for _, s := range offers {
		add(CodeOffer, SeverityBlock, msgOffer, s)
	}

	// Arguing.
	for _, m := range scanPhrases(rp.toks, masked, arguingPhrases) {
		add(CodeArguing, SeverityWarn, msgArguing, phraseSpan(m))
	}

	// Numbers.
	givenNumbers := map[string]bool{}
	for _, n := range findNumbers(rv, nil) {
		givenNumbers[n.canon] = true
	}
	bizNumbers := map[string]bool{}
	for _, n := range findNumbers(bz, nil) {
		bizNumbers[n.canon] = true
	}
	rating := strconv.Itoa(in.Rating)
	numberSeverity := SeverityWarn
	if hc {
		numberSeverity = SeverityBlock
	}
	var phiRepeatNumbers []candidate
	for _, n := range findNumbers(rp, masked) {
		if overlapsAny(n.s, contactSpans) || overlapsAny(n.s, ph) || overlapsAny(n.s, offers) {
			continue
		}
		switch {
		case bizNumbers[n.canon]:
		case n.canon == rating && nextIsStar(rp.toks, n.s.end):
		case givenNumbers[n.canon]:
			if hc {
				phiRepeatNumbers = append(phiRepeatNumbers, candidate{n.s, catRepeatNumber})
			}
		default:
			add(CodeNumberNotGiven, numberSeverity, msgNumberNotGiven, n.s)
		}
	}

	// Health and care: nothing that confirms a patient.
	if hc {
		var cands []candidate
		for _, m := range scanPhrases(rp.toks, masked, phiPhrases) {
			cands = append(cands, candidate{phraseSpan(m), m.cat})
		}
		cands = append(cands, findNames(rp, rv, masked, bizWords)...)
		cands = append(cands, phiRepeatNumbers...)
		cands = append(cands, phiRepeatContacts...)
		var accepted []span
		for _, c := range cands {
			if overlapsAny(c.s, accepted) {
				continue
			}
			accepted = append(accepted, c.s)
			add(CodePHIConfirmation, SeverityBlock, phiMessages[c.cat], c.s)
		}
	}
	return finish(hc, probs)
}

// finish orders the problems and fills ok and blocked.
func finish(hc bool, probs []Problem) Result {
	sort.SliceStable(probs, func(i, j int) bool {
		a, b := probs[i], probs[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		if a.End != b.End {
			return a.End < b.End
		}
		return a.Message < b.Message
	})
	res := Result{OK: true, Healthcare: hc, Problems: []Problem{}, Blocked: []string{}}
	seen := map[string]bool{}
	for _, p := range probs {
		res.Problems = append(res.Problems, p)
		if p.Severity != SeverityBlock {
			continue
		}
		res.OK = false
		if p.Phrase != "" && !seen[p.Phrase] {
			seen[p.Phrase] = true
			res.Blocked = append(res.Blocked, p.Phrase)
		}
	}
	return res
}

// acceptSpan adds s unless it overlaps a span already accepted.
func acceptSpan(list []span, s span) []span {
	if overlapsAny(s, list) {
		return list
	}
	return append(list, s)
}

// phraseMatch is a phrase found over tokens first..last.
type phraseMatch struct {
	first, last int
	cat         string
}

// matchAt reports whether words match the tokens from i on, none masked.
func matchAt(toks []token, i int, words []string, masked []bool) bool {
	if i+len(words) > len(toks) {
		return false
	}
	for k, w := range words {
		if masked != nil && masked[i+k] {
			return false
		}
		if toks[i+k].lower != w {
			return false
		}
	}
	return true
}

// scanPhrases walks the tokens left to right. At each token it takes the
// longest phrase of the list that matches there; a match uses up its
// tokens (an exception reports nothing), no match moves one token on.
func scanPhrases(toks []token, masked []bool, list []phraseEntry) []phraseMatch {
	var out []phraseMatch
	for i := 0; i < len(toks); {
		best := -1
		for k, e := range list {
			if (best < 0 || len(e.words) > len(list[best].words)) && matchAt(toks, i, e.words, masked) {
				best = k
			}
		}
		if best < 0 {
			i++
			continue
		}
		e := list[best]
		if e.cat != "" {
			out = append(out, phraseMatch{i, i + len(e.words) - 1, e.cat})
		}
		i += len(e.words)
	}
	return out
}

// nonEnglish is the English test. Tokens that also occur in the business
// name are left out. A text is not English when more than a third of its
// letters are non-ASCII letters, or when it holds at least two words of the
// foreign list and more of them than words of the English list.
func nonEnglish(t *text, bizWords map[string]bool) bool {
	ascii, foreign, en, fo := 0, 0, 0, 0
	for _, tk := range t.toks {
		if !tk.word || bizWords[tk.lower] {
			continue
		}
		for _, r := range tk.text {
			if isASCIILetter(r) {
				ascii++
			} else {
				foreign++
			}
		}
		if englishWords[tk.lower] {
			en++
		}
		if foreignWords[tk.lower] {
			fo++
		}
	}
	return (ascii+foreign > 0 && foreign*3 > ascii+foreign) || (fo >= 2 && fo > en)
}

// findContacts finds emails, then web addresses, then phone numbers, then
// street addresses; a later match that overlaps an earlier one is dropped.
func findContacts(t *text) []contact {
	var out []contact
	var spans []span
	try := func(kind string, s span) {
		if overlapsAny(s, spans) {
			return
		}
		spans = append(spans, s)
		out = append(out, contact{s: s, kind: kind, canon: canonContact(t, kind, s)})
	}
	for _, s := range findAll(reEmail, t.scanLower) {
		try(contactKindEmail, s)
	}
	for _, s := range findAll(reURL, t.scanLower) {
		if !alnumAfter(t.scanLower, s) {
			try(contactKindURL, s)
		}
	}
	for _, s := range findAll(rePhone, t.scanLower) {
		if !alnumBefore(t.scanLower, s) && !alnumAfter(t.scanLower, s) && phoneShape(t.scanLower[s.start:s.end]) {
			try(contactKindPhone, s)
		}
	}
	for _, m := range findAll(reAddress, t.scanCase+" ") {
		s := span{m.start, m.end - 1}
		if !alnumBefore(t.scanCase, s) {
			try(contactKindAddress, s)
		}
	}
	return out
}

// phoneShape accepts 10 to 15 digits, or 7 digits written ddd-dddd (the
// separator a space, full stop or hyphen).
func phoneShape(m string) bool {
	digits := 0
	for i := 0; i < len(m); i++ {
		if m[i] >= '0' && m[i] <= '9' {
			digits++
		}
	}
	if digits >= 10 && digits <= 15 {
		return true
	}
	if digits != 7 || len(m) != 8 || !strings.ContainsRune(phoneSeparatorChars, rune(m[3])) {
		return false
	}
	for i := 0; i < 8; i++ {
		if i != 3 && (m[i] < '0' || m[i] > '9') {
			return false
		}
	}
	return true
}

// canonContact is the form compared between reply and review.
func canonContact(t *text, kind string, s span) string {
	low := t.lowerSlice(s.start, s.end)
	switch kind {
	case contactKindURL:
		low = strings.TrimPrefix(low, "https://")
		low = strings.TrimPrefix(low, "http://")
		low = strings.TrimPrefix(low, "www.")
		return strings.TrimRight(low, "/")
	case contactKindPhone:
		var b strings.Builder
		for _, r := range low {
			if isDigit(r) {
				b.WriteRune(r)
			}
		}
		return b.String()
	case contactKindAddress:
		var b strings.Builder
		gap := false
		for _, r := range low {
			if isLower(r) || isDigit(r) {
				if gap && b.Len() > 0 {
					b.WriteByte(' ')
				}
				gap = false
				b.WriteRune(r)
			} else {
				gap = true
			}
		}
		return b.String()
	}
	return low
}

// findNumbers finds digit numbers ("3", "3,000", "10:30", "3/14") and
// number words ("three") and returns them by start. Commas are dropped from
// the canonical form; number words map to their digits.
func findNumbers(t *text, masked []bool) []number {
	var out []number
	for _, s := range findAll(reNumber, t.scanLower) {
		out = append(out, number{s: s, canon: strings.ReplaceAll(t.scanLower[s.start:s.end], ",", "")})
	}
	for i, tk := range t.toks {
		if !tk.word || (masked != nil && masked[i]) {
			continue
		}
		if v, ok := numberWords[tk.lower]; ok {
			out = append(out, number{s: span{tk.start, tk.end}, canon: v})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].s.start < out[j].s.start })
	return out
}

// nextIsStar reports whether the first token at or after end is "star" or
// "stars".
func nextIsStar(toks []token, end int) bool {
	for _, tk := range toks {
		if tk.start >= end {
			return starWords[tk.lower]
		}
	}
	return false
}

// findNames finds names for the health check: a title followed by a
// capitalised word ("Dr. Patel", "Nurse Amy Lee"), and capitalised words
// that are not common words, not business-name words and either stand
// mid-sentence or also appear, spelt the same, in the review.
func findNames(rp, rv *text, masked []bool, bizWords map[string]bool) []candidate {
	toks := rp.toks
	gap := func(i int) string { return string(rp.norm[toks[i-1].end:toks[i].start]) }
	onlyChars := func(s, chars string, minLen, maxLen int) bool {
		n := len([]rune(s))
		if n < minLen || n > maxLen {
			return false
		}
		for _, r := range s {
			if !strings.ContainsRune(chars, r) {
				return false
			}
		}
		return true
	}
	capital := func(tk token) bool { return tk.word && isUpper([]rune(tk.text)[0]) }
	nameWord := func(i int) bool {
		tk := toks[i]
		rs := []rune(tk.text)
		return !masked[i] && tk.word && len(rs) >= 2 && isUpper(rs[0]) && isLower(rs[1]) &&
			!commonWords[tk.lower] && !bizWords[tk.lower]
	}
	initial := func(i int) bool { return i == 0 || strings.ContainsAny(gap(i), sentenceEndChars) }
	reviewWords := map[string]bool{}
	for _, tk := range rv.toks {
		if tk.word {
			reviewWords[tk.text] = true
		}
	}
	extend := func(j int) int {
		for j+1 < len(toks) && onlyChars(gap(j+1), nameJoinChars, 1, 1) && nameWord(j+1) {
			j++
		}
		return j
	}
	used := make([]bool, len(toks))
	var out []candidate
	for i := 0; i+1 < len(toks); i++ {
		if masked[i] || masked[i+1] || !toks[i].word || !titles[toks[i].lower] {
			continue
		}
		if !capital(toks[i+1]) || bizWords[toks[i+1].lower] || !onlyChars(gap(i+1), titleGapChars, 1, 2) {
			continue
		}
		last := extend(i + 1)
		for k := i; k <= last; k++ {
			used[k] = true
		}
		out = append(out, candidate{span{toks[i].start, toks[last].end}, catName})
		i = last
	}
	for i := 0; i < len(toks); i++ {
		if used[i] || !nameWord(i) || (initial(i) && !reviewWords[toks[i].text]) {
			continue
		}
		last := extend(i)
		for k := i; k <= last && !used[k]; k++ {
			used[k] = true
		}
		out = append(out, candidate{span{toks[i].start, toks[last].end}, catName})
		i = last
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].s.start < out[b].s.start })
	return out
}
