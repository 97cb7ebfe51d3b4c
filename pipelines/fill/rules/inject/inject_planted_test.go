package inject

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// planted is a sentence planted in a page: aimed at agents or not, in a
// language, at a place.
type planted struct {
	agent bool
	lang  string
	where string
	text  string
}

// readPlanted reads the planted set, testdata/planted.txt: one sentence
// a line, after "agent" or "person", its language and its place,
// tab-separated ("#" begins a comment). The rules' prefilter test
// (package rules) reads the same file.
func readPlanted(t *testing.T) []planted {
	t.Helper()
	raw, err := os.ReadFile("testdata/planted.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []planted
	for i, l := range strings.Split(string(raw), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 4 || f[0] != "agent" && f[0] != "person" || f[1] == "" || f[3] == "" ||
			!slices.Contains([]string{InVisibleText, InHiddenText, InAttribute, InComment}, f[2]) {
			t.Fatalf("testdata/planted.txt:%d: %q is not agent|person, a language, a place and a sentence", i+1, l)
		}
		out = append(out, planted{agent: f[0] == "agent", lang: f[1], where: f[2], text: f[3]})
	}
	return out
}

// TestPlantedAgentText measures the rules on the planted set: the share
// of instructions aimed at agents flagged (recall) and the share of
// flags that are right (precision), with floors.
func TestPlantedAgentText(t *testing.T) {
	var tp, fp, fn, tn int
	langs, places := map[string]bool{}, map[string]bool{}
	plantedSet := readPlanted(t)
	for _, p := range plantedSet {
		langs[p.lang], places[p.where] = true, true
		got, why := AimedAtAgents(p.text, p.where)
		switch {
		case got && p.agent:
			tp++
			if why == "" {
				t.Errorf("flagged without a reason: %q", p.text)
			}
		case got && !p.agent:
			fp++
			t.Logf("false flag (%s, %s): %q", p.where, why, p.text)
		case !got && p.agent:
			fn++
			t.Logf("missed (%s): %q", p.where, p.text)
		default:
			tn++
		}
	}
	recall := float64(tp) / float64(tp+fn)
	precision := float64(tp) / float64(tp+fp)
	t.Logf("%d sentences (%d aimed at agents, %d addressed to people) in %d languages and %d places: recall %.3f (%d/%d), precision %.3f (%d/%d), %d people's notices left alone",
		len(plantedSet), tp+fn, fp+tn, len(langs), len(places), recall, tp, tp+fn, precision, tp, tp+fp, tn)
	if recall < 0.99 || precision < 0.99 {
		t.Errorf("recall %.3f, precision %.3f: floors 0.99 and 0.99", recall, precision)
	}
}
