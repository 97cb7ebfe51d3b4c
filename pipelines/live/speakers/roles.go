package speakers

import (
	"sort"
	"strings"
)

// Speakers lists the speaker labels of lines in order of first line.
func Speakers(lines []Line) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lines {
		if l.Speaker != "" && !seen[l.Speaker] {
			seen[l.Speaker] = true
			out = append(out, l.Speaker)
		}
	}
	return out
}

// ByQuestions is the role map's fallback rule: the speaker with the most
// question lines (ties: more lines, then first heard) is asker, the one of
// the others with the most words answerer, the rest rest.
func ByQuestions(lines []Line, asker, answerer, rest string) map[string]string {
	speakers := Speakers(lines)
	if len(speakers) == 0 {
		return map[string]string{}
	}
	type stat struct {
		questions, lines, words, first int
	}
	st := map[string]*stat{}
	for i, sp := range speakers {
		st[sp] = &stat{first: i}
	}
	for _, l := range lines {
		if l.Speaker == "" {
			continue
		}
		x := st[l.Speaker]
		x.lines++
		x.words += len(strings.Fields(l.Text))
		x.questions += strings.Count(l.Text, "?")
	}
	order := append([]string(nil), speakers...)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := st[order[i]], st[order[j]]
		if a.questions != b.questions {
			return a.questions > b.questions
		}
		if a.lines != b.lines {
			return a.lines > b.lines
		}
		return a.first < b.first
	})
	out := map[string]string{order[0]: asker}
	others := order[1:]
	sort.SliceStable(others, func(i, j int) bool { return st[others[i]].words > st[others[j]].words })
	for i, sp := range others {
		if i == 0 {
			out[sp] = answerer
		} else {
			out[sp] = rest
		}
	}
	return out
}
