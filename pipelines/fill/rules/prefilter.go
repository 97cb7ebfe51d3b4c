package rules

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// A label's words are looked for in long documents (up to 8 MB each):
// Go's regular expressions read a large alternation slowly, so each rule
// is tried only where a word starts with one of the beginnings its
// matches can have (computed from the expression itself), on a short
// window there.

const (
	prefixLen = 3   // beginnings are computed up to this many bytes
	windowLen = 200 // a label and its words fit in this many bytes
)

// scanner finds a rule's matches in long text.
type scanner struct {
	re *regexp.Regexp
	// at is re anchored at the window's start (it gives up as soon as no
	// match can start there).
	at *regexp.Regexp
	// starts are the beginnings a match can have, by length; nil when
	// they cannot be told (the rule is run on the whole text).
	starts []map[string]bool
}

func newScanner(re *regexp.Regexp) *scanner {
	sc := &scanner{re: re}
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil || !atWordStart(parsed.Simplify()) {
		return sc
	}
	set, ok := beginnings(parsed.Simplify())
	if !ok || len(set) == 0 {
		return sc
	}
	sc.at = regexp.MustCompile(`^(?:` + re.String() + `)`)
	sc.starts = make([]map[string]bool, prefixLen+1)
	for s := range set {
		if s == "" {
			sc.starts = nil
			return sc
		}
		if sc.starts[len(s)] == nil {
			sc.starts[len(s)] = map[string]bool{}
		}
		sc.starts[len(s)][s] = true
	}
	return sc
}

// atWordStart says whether every match of re starts with \b and a
// word character: only then is it enough to try it at words' starts.
func atWordStart(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpCapture:
		return atWordStart(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !atWordStart(sub) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		return len(re.Sub) > 1 && re.Sub[0].Op == syntax.OpWordBoundary && wordFirst(re.Sub[1])
	}
	return false
}

// wordFirst says whether re's matches start with a word character.
func wordFirst(re *syntax.Regexp) bool {
	st, ok := startsOf(re)
	if !ok {
		return false
	}
	for s := range st.all() {
		if s == "" {
			return false
		}
		if r, _ := utf8.DecodeRuneInString(s); !isWordByte(r) {
			return false
		}
	}
	return true
}

// findAll is re.FindAllStringIndex(s, -1), for matches that start at a
// word's start (as every rule with beginnings does) and fit a window.
func (sc *scanner) findAll(s string) [][]int {
	if sc.starts == nil {
		return sc.re.FindAllStringIndex(s, -1)
	}
	var out [][]int
	prevWord := false
	for p := 0; p < len(s); {
		r, n := utf8.DecodeRuneInString(s[p:])
		word := isWordByte(r)
		if word && !prevWord && sc.begins(s[p:]) {
			end := min(len(s), p+windowLen)
			for end < len(s) && isWordByte(rune(s[end])) {
				end++
			}
			if m := sc.at.FindStringIndex(s[p:end]); m != nil {
				out = append(out, []int{p, p + m[1]})
			}
		}
		prevWord = word
		p += n
	}
	return out
}

func (sc *scanner) begins(s string) bool {
	for k := 1; k <= prefixLen && k <= len(s); k++ {
		if sc.starts[k][s[:k]] {
			return true
		}
	}
	return false
}

// isWordByte is what \b counts as a word character.
func isWordByte(r rune) bool {
	return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// starts are the beginnings of a part's matches: open, the part may
// match exactly this (shorter than prefixLen), so what follows it
// extends it; closed, the part's matches begin with this, and nothing
// after it can be told.
type starts struct{ open, closed map[string]bool }

func newStarts() starts { return starts{open: map[string]bool{}, closed: map[string]bool{}} }

// add puts s in, closed when it is prefixLen long (cut) or close says.
func (st starts) add(s string, closeIt bool) {
	if len(s) >= prefixLen {
		st.closed[s[:prefixLen]] = true
		return
	}
	if closeIt {
		st.closed[s] = true
		return
	}
	st.open[s] = true
}

func (st starts) all() map[string]bool {
	out := map[string]bool{}
	for s := range st.open {
		out[s] = true
	}
	for s := range st.closed {
		out[s] = true
	}
	return out
}

// beginnings are the strings (up to prefixLen bytes) that every match of
// re starts with one of, skipping a leading \b; ok is false when they
// cannot be told.
func beginnings(re *syntax.Regexp) (map[string]bool, bool) {
	st, ok := startsOf(re)
	if !ok {
		return nil, false
	}
	return st.all(), true
}

func startsOf(re *syntax.Regexp) (starts, bool) {
	st := newStarts()
	if re.Flags&syntax.FoldCase != 0 {
		return st, false
	}
	switch re.Op {
	case syntax.OpLiteral:
		st.add(string(re.Rune), false)
		return st, true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 40 {
				return st, false
			}
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				st.add(string(c), false)
			}
		}
		return st, len(st.open)+len(st.closed) > 0
	case syntax.OpCapture:
		return startsOf(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, ok := startsOf(sub)
			if !ok {
				return st, false
			}
			for k := range s.open {
				st.open[k] = true
			}
			for k := range s.closed {
				st.closed[k] = true
			}
		}
		return st, true
	case syntax.OpConcat:
		return concatStarts(re.Sub)
	case syntax.OpPlus, syntax.OpRepeat:
		if re.Op == syntax.OpRepeat && re.Min == 0 {
			return st, false
		}
		s, ok := startsOf(re.Sub[0])
		if !ok {
			return st, false
		}
		for k := range s.all() {
			st.add(k, true)
		}
		return st, true
	}
	return st, false
}

// concatStarts: a leading \b is skipped; each open beginning grows with
// the next part's (an optional part also leaves it as it was), until the
// next part cannot be told, which closes them all.
func concatStarts(subs []*syntax.Regexp) (starts, bool) {
	for len(subs) > 0 && subs[0].Op == syntax.OpWordBoundary {
		subs = subs[1:]
	}
	if len(subs) == 0 {
		return newStarts(), false
	}
	st, ok := startsOf(subs[0])
	if !ok {
		return st, false
	}
	for _, sub := range subs[1:] {
		if len(st.open) == 0 {
			break
		}
		if sub.Op == syntax.OpWordBoundary || sub.Op == syntax.OpNoWordBoundary {
			continue
		}
		optional := sub.Op == syntax.OpQuest || sub.Op == syntax.OpStar
		inner := sub
		if optional {
			inner = sub.Sub[0]
		}
		next, ok := startsOf(inner)
		if ok && sub.Op == syntax.OpStar {
			for k := range next.open {
				next.closed[k] = true
				delete(next.open, k)
			}
		}
		if !ok || len(st.open)*(len(next.open)+len(next.closed)) > 4096 {
			for k := range st.open {
				st.closed[k] = true
			}
			st.open = map[string]bool{}
			break
		}
		grown := newStarts()
		for k := range st.closed {
			grown.closed[k] = true
		}
		for a := range st.open {
			if optional {
				grown.open[a] = true
			}
			for b := range next.open {
				grown.add(a+b, false)
			}
			for b := range next.closed {
				grown.add(a+b, true)
			}
		}
		st = grown
	}
	return st, true
}
