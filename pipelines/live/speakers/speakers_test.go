package speakers_test

import (
	"reflect"
	"strings"
	"testing"

	"boxd/engine/diarize"
	"boxd/pipelines/live/speakers"
)

func TestAlign(t *testing.T) {
	turn := func(a, b float64, sp int) diarize.Turn { return diarize.Turn{Start: a, End: b, Speaker: sp} }
	type line struct {
		speaker string // "" for none
		start   float64
		text    string
	}
	cases := []struct {
		name      string
		sentences []speakers.Span
		turns     []diarize.Turn
		want      []line
	}{
		{"one turn a sentence",
			[]speakers.Span{{Start: 0.5, End: 2, Text: "How are you?"}, {Start: 2.5, End: 4, Text: "Fine thanks."}},
			[]diarize.Turn{turn(0.4, 2.1, 3), turn(2.4, 4.2, 1)},
			[]line{{"S01", 0.5, "How are you?"}, {"S02", 2.5, "Fine thanks."}}},
		{"a sentence across a turn change is split, words in proportion to time",
			[]speakers.Span{{Start: 0, End: 4, Text: "one two three four five six seven eight"}},
			[]diarize.Turn{turn(0, 1, 0), turn(1, 4, 1)},
			[]line{{"S01", 0, "one two"}, {"S02", 1, "three four five six seven eight"}}},
		{"the cut moves to the nearest sentence end within two words",
			[]speakers.Span{{Start: 0, End: 4.6, Text: "My back hurts since Monday. Does it hurt when you bend?"}},
			[]diarize.Turn{turn(0, 2.4, 0), turn(2.4, 4.6, 1)},
			[]line{{"S01", 0, "My back hurts since Monday."}, {"S02", 2.4, "Does it hurt when you bend?"}}},
		{"else to a clause end",
			[]speakers.Span{{Start: 0, End: 4, Text: "one two three, four five six seven eight"}},
			[]diarize.Turn{turn(0, 2, 0), turn(2, 4, 1)},
			[]line{{"S01", 0, "one two three,"}, {"S02", 2, "four five six seven eight"}}},
		{"a short backchannel does not split",
			[]speakers.Span{{Start: 0, End: 5, Text: "I have had this pain for three weeks now"}},
			[]diarize.Turn{turn(0, 5, 0), turn(2, 2.3, 1)},
			[]line{{"S01", 0, "I have had this pain for three weeks now"}}},
		{"overlap goes to the speaker with more speech in the sentence",
			[]speakers.Span{{Start: 0, End: 3, Text: "yes yes"}},
			[]diarize.Turn{turn(0, 3, 0), turn(1, 2.5, 1)},
			[]line{{"S01", 0, "yes yes"}}},
		{"no turn over the sentence: the nearest within 3 s",
			[]speakers.Span{{Start: 5, End: 6, Text: "okay"}, {Start: 30, End: 31, Text: "far away"}},
			[]diarize.Turn{turn(0, 4, 2)},
			[]line{{"S01", 5, "okay"}, {"", 30, "far away"}}},
		{"one word cannot split",
			[]speakers.Span{{Start: 0, End: 4, Text: "right"}},
			[]diarize.Turn{turn(0, 2, 0), turn(2, 4, 1)},
			[]line{{"S01", 0, "right"}}},
		{"no turns at all", []speakers.Span{{Start: 1, End: 2, Text: "hello"}}, nil,
			[]line{{"", 1, "hello"}}},
		{"no sentences", nil, []diarize.Turn{turn(0, 1, 0)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := speakers.Align(c.sentences, c.turns)
			if got == nil || len(got) != len(c.want) {
				t.Fatalf("%d lines, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				g := got[i]
				sp := g.Speaker
				if g.N != i+1 || sp != w.speaker || g.Start != w.start || g.Text != w.text || g.End == nil {
					t.Errorf("line %d: n %d speaker %q start %v text %q end %v; want %+v", i+1, g.N, sp, g.Start, g.Text, g.End, w)
				}
			}
		})
	}
	// Split lines join back into the sentence, in order, with ends and
	// starts meeting at the change.
	got := speakers.Align([]speakers.Span{{Start: 0, End: 9, Text: "a b c d e f g h i"}},
		[]diarize.Turn{turn(0, 3, 0), turn(3, 6, 1), turn(6, 9, 0)})
	var words []string
	for i, l := range got {
		words = append(words, l.Text)
		if i > 0 && *got[i-1].End != l.Start {
			t.Errorf("line %d starts at %v, the one before ends at %v", l.N, l.Start, *got[i-1].End)
		}
	}
	if len(got) != 3 || strings.Join(words, " ") != "a b c d e f g h i" || got[0].Speaker != "S01" || got[1].Speaker != "S02" || got[2].Speaker != "S01" {
		t.Errorf("three turns: %+v", got)
	}
	// A sentence without a known end keeps end null (it ends at the next
	// sentence's start for alignment).
	got = speakers.Align([]speakers.Span{{Start: 0, Text: "hi there"}, {Start: 2, End: 3, Text: "hello"}}, []diarize.Turn{turn(0, 1.5, 0), turn(1.8, 3, 1)})
	if got[0].End != nil || got[0].Speaker != "S01" || got[1].Speaker != "S02" {
		t.Errorf("unknown end: %+v", got)
	}
}

func TestRolesByQuestions(t *testing.T) {
	l := func(sp, text string) speakers.Line { return speakers.Line{Speaker: sp, Text: text} }
	lines := []speakers.Line{
		l("S01", "Hello, thanks for joining."),
		l("S02", "Hi. What does it cost? And when can you ship?"),
		l("S01", "Fine."),
		l("S03", "How many trucks do you run? Who decides? What is the budget?"),
		l("S02", "We run forty trucks across three states and the budget is set in June by finance."),
	}
	got := speakers.ByQuestions(lines, "Seller", "Buyer", "Buyer")
	// S03 asks three questions: the Seller; of the others S02 says most.
	if want := map[string]string{"S03": "Seller", "S02": "Buyer", "S01": "Buyer"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	got = speakers.ByQuestions(lines, "Doctor", "Patient", "Other")
	if want := map[string]string{"S03": "Doctor", "S02": "Patient", "S01": "Other"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	// No questions at all: the speaker with more lines asks.
	got = speakers.ByQuestions([]speakers.Line{l("S01", "a"), l("S02", "b"), l("S02", "c")}, "Doctor", "Patient", "Other")
	if want := map[string]string{"S02": "Doctor", "S01": "Patient"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

func TestByQuestionsWithoutSpeakers(t *testing.T) {
	if got := speakers.ByQuestions([]speakers.Line{{Text: "hello"}}, "Doctor", "Patient", "Other"); len(got) != 0 {
		t.Errorf("%v", got)
	}
}
