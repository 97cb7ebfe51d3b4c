package replyguard

import "strings"

// healthKeywords are the phrases (tokens joined by spaces, lower case) that
// mark a health or care business in its name or its type. A schema.org type
// such as "MedicalClinic" is split at lower-to-upper case changes first, so
// it reads "medical clinic".
var healthKeywords = phraseList(lists.HealthKeywords)

// healthCredentials are matched case-sensitively as whole tokens, after
// full stops are removed ("M.D." reads "MD").
var healthCredentials = wordSet(lists.HealthCredentials)

// veterinaryWords veto the health test: animal care is not covered by HIPAA.
var veterinaryWords = phraseList(lists.VeterinaryWords)

// healthTokens prepares a business name or type for the health test: full
// stops are removed, the text is normalised and tokenised, and word tokens
// are split where a lower-case ASCII letter is followed by an upper-case one.
func healthTokens(s string) []token {
	s = strings.ReplaceAll(s, ".", "")
	t := analyse(s)
	var out []token
	for _, tk := range t.toks {
		rs := []rune(tk.text)
		from := 0
		for k := 1; k <= len(rs); k++ {
			if k == len(rs) || (isLower(rs[k-1]) && isUpper(rs[k])) {
				part := string(rs[from:k])
				out = append(out, token{start: tk.start + from, end: tk.start + k, text: part, lower: lowerString(part), word: tk.word})
				from = k
			}
		}
	}
	return out
}

// containsPhrase reports whether any entry matches consecutive tokens.
func containsPhrase(toks []token, list []phraseEntry) bool {
	for i := range toks {
		for _, e := range list {
			if matchAt(toks, i, e.words, nil) {
				return true
			}
		}
	}
	return false
}

func healthMatch(toks []token) bool {
	for _, tk := range toks {
		if healthCredentials[tk.text] {
			return true
		}
	}
	return containsPhrase(toks, healthKeywords)
}

// IsHealthcare reports whether a business is a health or care business
// whose public replies must not confirm anything about a patient. The name
// and the type are tested separately: either may match a keyword or a
// credential, and a veterinary word in either makes the answer false.
func IsHealthcare(name, businessType string) bool {
	n := healthTokens(name)
	t := healthTokens(businessType)
	if containsPhrase(n, veterinaryWords) || containsPhrase(t, veterinaryWords) {
		return false
	}
	return healthMatch(n) || healthMatch(t)
}
