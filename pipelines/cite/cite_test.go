package cite_test

import (
	"reflect"
	"testing"

	"boxd/pipelines/cite"
)

// lines is a short inspection transcript, lines 1 to 4.
var lines = cite.Lines{
	{N: 1, T: 0.5, Text: "It’s an asphalt shingle roof, about twelve years old."},
	{N: 2, T: 4, Text: "The step flashing at the chimney is missing, and the decking below it is wet."},
	{N: 3, T: 9.5, Text: "I measured moisture at 24 percent,"},
	{N: 4, T: 12, Text: "so that is out of spec — a “major” issue."},
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in    string
		lines []int
		quote string
		ok    bool
	}{
		{"[2] the step flashing", []int{2}, "the step flashing", true},
		{"  [3,2]  moisture   at 24  ", []int{2, 3}, "moisture at 24", true},
		{"[2,2] twice", []int{2}, "twice", true},
		{"[12345] too long a number", []int{}, "", false},
		{"the step flashing", []int{}, "", false},
		{"[2]no space", []int{}, "", false},
	} {
		lines, quote, ok := cite.Parse(c.in)
		if !reflect.DeepEqual(lines, c.lines) || quote != c.quote || ok != c.ok {
			t.Errorf("Parse(%q) = %v, %q, %v; want %v, %q, %v", c.in, lines, quote, ok, c.lines, c.quote, c.ok)
		}
	}
	for _, c := range []struct {
		in           string
		lines        []int
		label, quote string
		ok           bool
	}{
		{"[1] address: 12 Elm  Street", []int{1}, "address", "12 Elm Street", true},
		{"[4,3] NEC 210.8: section 210.8", []int{3, 4}, "NEC 210.8", "section 210.8", true},
		{"[1] no label here", []int{1}, "", "no label here", false},
		{"address: 12 Elm Street", []int{}, "", "", false},
	} {
		lines, label, quote, ok := cite.ParseLabeled(c.in)
		if !reflect.DeepEqual(lines, c.lines) || label != c.label || quote != c.quote || ok != c.ok {
			t.Errorf("ParseLabeled(%q) = %v, %q, %q, %v", c.in, lines, label, quote, ok)
		}
	}
}

func TestNormTrimCut(t *testing.T) {
	if got := cite.Norm("  It’s a “Major”\u00a0Issue – ok…\t"); got != "it's a major issue - ok..." {
		t.Errorf("Norm = %q", got)
	}
	if got := cite.Trim(` ..."the flashing!", `); got != "the flashing" {
		t.Errorf("Trim = %q", got)
	}
	if got := cite.Cut("the step flashing", 17); got != "the step" {
		t.Errorf("Cut at the limit = %q, want the last word dropped", got)
	}
	if got := cite.Cut("the step flashing", 18); got != "the step flashing" {
		t.Errorf("Cut under the limit = %q", got)
	}
	if got := cite.Cut("flashing", 8); got != "flashing" {
		t.Errorf("Cut of one word = %q", got)
	}
}

func TestProblemAndVerify(t *testing.T) {
	for _, c := range []struct {
		name, quote string
		cited       []int
		problem     string
	}{
		{"verbatim", "The step flashing at the chimney is missing", []int{2}, ""},
		{"case, apostrophe and end punctuation", "IT'S AN ASPHALT SHINGLE ROOF,", []int{1}, ""},
		{"over two lines", "24 percent, so that is out of spec", []int{4, 3}, ""},
		{"typographic dash and quotes", "out of spec - a major issue", []int{4}, ""},
		{"one word changed", "the step flashing is broken", []int{2}, "the quote is not in the cited lines"},
		{"wrong line", "the decking below it is wet", []int{1}, "the quote is not in the cited lines; it is in line 2"},
		{"inside a word", "at the chim", []int{2}, "the quote is not in the cited lines"},
		{"no such line", "the decking", []int{2, 9}, "line 9 does not exist"},
		{"no line", "the decking", nil, "no line cited"},
		{"no quote", " ... ", []int{2}, "no quote"},
	} {
		if got := cite.Problem(lines, c.quote, c.cited); got != c.problem {
			t.Errorf("%s: Problem = %q, want %q", c.name, got, c.problem)
		}
		if got := cite.Verify(lines, c.quote, c.cited); got != (c.problem == "") {
			t.Errorf("%s: Verify = %v", c.name, got)
		}
	}
}

func TestLinesAndTimes(t *testing.T) {
	texts, missing := lines.Cited([]int{3, 7, 1})
	if !reflect.DeepEqual(texts, []string{lines[2].Text, lines[0].Text}) || !reflect.DeepEqual(missing, []int{7}) {
		t.Errorf("Cited = %q, %v", texts, missing)
	}
	if l, ok := lines.Line(4); !ok || l.T != 12 {
		t.Errorf("Line(4) = %+v, %v", l, ok)
	}
	if _, ok := lines.Line(5); ok {
		t.Error("Line(5) exists")
	}
	if got := cite.FirstT(lines, []int{4, 2}); got == nil || *got != 4 {
		t.Errorf("FirstT = %v, want line 2's 4", got)
	}
	if cite.FirstT(lines, nil) != nil || cite.FirstT(lines, []int{9, 10}) != nil {
		t.Error("FirstT of no line or a missing line is not nil")
	}
}

func TestContainsWords(t *testing.T) {
	for _, c := range []struct {
		text, q string
		want    bool
	}{
		{"that is it", "at", false},
		{"look at that", "at", true},
		{"that at", "at", true},
		{"24 percent,", "percent,", true},
		{"x-ray", "ray", true}, // "-" is not a word character
		{"anything", "", false},
	} {
		if got := cite.ContainsWords(c.text, c.q); got != c.want {
			t.Errorf("ContainsWords(%q, %q) = %v", c.text, c.q, got)
		}
	}
}

func TestNoteRefs(t *testing.T) {
	if got := cite.Ref([]int{2, 3}); got != "[[2,3]]" {
		t.Errorf("Ref = %q", got)
	}
	if got := cite.Ref([]int{5}); got != "[[5]]" {
		t.Errorf("Ref = %q", got)
	}
	if got := cite.StripRefs("Takes metformin [[9]] twice a day [[2"); got != "Takes metformin   twice a day 2" {
		t.Errorf("StripRefs = %q", got)
	}
	if got := cite.MissingText([]int{9}); got != "line 9 does not exist" {
		t.Errorf("MissingText = %q", got)
	}
	if got := cite.MissingText([]int{9, 12}); got != "lines 9 and 12 do not exist" {
		t.Errorf("MissingText = %q", got)
	}
	if !cite.IsWordRune('é') || !cite.IsWordRune('7') || cite.IsWordRune('-') {
		t.Error("IsWordRune")
	}
}
