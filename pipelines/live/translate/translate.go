// Package translate is the translate live vertical (contract document 1,
// section 6). Live lanes: translation (per sentence: one event for each
// final source sentence, data {i, t, source, translation, target}, in
// order of i) and glossary (names and terms and how the translations
// render them, brought up to date once at least glossaryEvery seconds of
// transcript have passed since its last run). After stop: glossary once
// more (when sentences came after its last run) and summary (the
// conversation summed up in the target language). The final artifact,
// done.summary, holds translation (every sentence in order), summary,
// glossary, lang and target. Payload shapes are in docs/decisions.md
// ("Live lanes: field and translate").
package translate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"boxd/pipelines/cite"
	"boxd/pipelines/live"
	"boxd/pipelines/schema"
)

// New is the translate vertical; a session's Lang and Target (its source
// and target languages) reach the lanes in live.State.
func New() *live.Vertical {
	return &live.Vertical{
		ID:      "translate",
		Live:    []*live.LaneSpec{translationLane(), glossaryLane(false)},
		Final:   []*live.LaneSpec{glossaryLane(true), translateSummaryLane()},
		Summary: translateSummary,
	}
}

// glossaryEvery is the transcript time between glossary runs, in seconds.
const glossaryEvery = 20.0

// Bounds of the translate answers, in characters.
const (
	translationChars = 400
	glossaryTermChar = 40
	glossaryPerRun   = 3
	glossaryMaxTerms = 40
	summaryChars     = 480
)

// languageNames name the spoken languages section 6 accepts.
var languageNames = map[string]string{
	"ar": "Arabic", "de": "German", "en": "English", "es": "Spanish", "fr": "French", "hi": "Hindi", "it": "Italian",
	"ja": "Japanese", "ko": "Korean", "nl": "Dutch", "pt": "Portuguese", "ru": "Russian", "zh": "Chinese",
}

var regionNames = map[string]string{
	"BR": "Brazil", "PT": "Portugal", "MX": "Mexico", "ES": "Spain", "US": "United States", "GB": "United Kingdom",
	"AR": "Argentina", "CO": "Colombia", "CN": "China", "TW": "Taiwan", "HK": "Hong Kong", "CA": "Canada", "FR": "France",
}

// languageName names a language code for the model: es → Spanish, pt-BR →
// Portuguese (Brazil); a code it does not know stays as it is.
func languageName(code string) string {
	base, region, _ := strings.Cut(strings.ReplaceAll(code, "_", "-"), "-")
	name, ok := languageNames[strings.ToLower(base)]
	if !ok {
		return code
	}
	if region != "" {
		r := strings.ToUpper(region)
		if n, ok := regionNames[r]; ok {
			r = n
		}
		name += " (" + r + ")"
	}
	return name
}

// sourceLanguage is the source language as the model is told it.
func sourceLanguage(st *live.State) string {
	if st.Lang == "" || st.Lang == "auto" {
		return "the speaker's language"
	}
	return languageName(st.Lang)
}

func targetCode(st *live.State) string {
	if st.Target == "" {
		return "en"
	}
	return st.Target
}

// --- translation --------------------------------------------------------

// TranslatedSentence is one translation event's data.
type TranslatedSentence struct {
	I           int     `json:"i"`
	T           float64 `json:"t"`
	Source      string  `json:"source"`
	Translation string  `json:"translation"`
	Target      string  `json:"target"`
}

// translationContext is how many earlier sentences a translation prompt
// shows.
const translationContext = 2

func translationLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(schema.Prop("translation", schema.UText(translationChars))))
	return &live.LaneSpec{
		ID: "translation", Title: "Translation", Schema: sch, MaxTokens: maxTok, PerSentence: true,
		Prompt: func(st *live.State, i int) (string, string) {
			s, ok := st.Line(i + 1)
			if !ok || strings.TrimSpace(s.Text) == "" {
				return "", ""
			}
			tgt := languageName(targetCode(st))
			system := fmt.Sprintf("You are a live interpreter. Translate one sentence of a spoken conversation from %s into %s. "+
				"The sentence comes from speech recognition and may have misrecognised words. Translate the meaning "+
				"faithfully and naturally; keep names of people, places and businesses as they are unless the glossary "+
				"gives a rendering; keep numbers, amounts, dates and times exact; add nothing. If the sentence is already "+
				"in %s, repeat it. Answer with one JSON object {\"translation\": \"...\"} on one line, in %s, without "+
				"straight double quotation marks (use typographic ones if needed).", sourceLanguage(st), tgt, tgt, tgt)
			var b strings.Builder
			if terms := live.LaneOf[Glossary](st, "glossary").Terms; len(terms) > 0 {
				b.WriteString("Glossary (use these renderings):\n")
				for _, t := range terms {
					fmt.Fprintf(&b, "- %s → %s\n", t.Source, t.Rendering)
				}
			}
			var earlier []string
			for _, e := range st.Sentences {
				if e.I < s.I && e.I >= s.I-translationContext {
					earlier = append(earlier, e.Text)
				}
			}
			if len(earlier) > 0 {
				b.WriteString("Earlier sentences, for context only:\n" + strings.Join(earlier, "\n") + "\n")
			}
			b.WriteString("Sentence to translate into " + tgt + ":\n" + s.Text)
			return system, b.String()
		},
		Finish: func(st *live.State, i int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Translation string `json:"translation"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			s, ok := st.Line(i + 1)
			if !ok {
				return "", nil, fmt.Errorf("sentence %d is not in the transcript", i)
			}
			ts := TranslatedSentence{I: s.I, T: s.T, Source: s.Text, Translation: live.CleanText(a.Translation), Target: targetCode(st)}
			return ts.Translation, ts, nil
		},
	}
}

// translations are the translation events so far, by sentence index.
func translations(st *live.State) map[int]TranslatedSentence {
	out := map[int]TranslatedSentence{}
	for i, lb := range st.PerSentence["translation"] {
		if ts, ok := lb.Data.(TranslatedSentence); ok {
			out[i] = ts
		}
	}
	return out
}

// --- glossary -----------------------------------------------------------

// glossaryPromptBytes bounds the transcript and, apart, the translations
// in a glossary prompt (UTF-8 bytes, a fair bound on tokens in any
// script), so that both with the glossary and the answer fit an
// 8,192-token context.
const glossaryPromptBytes = 7000

// recentLines renders the newest sentences as numbered lines ([n] text,
// text from render; sentences it renders empty are left out), as many as
// fit in maxBytes, saying so when earlier ones are left out.
func recentLines(st *live.State, maxBytes int, render func(s live.Sentence) string) string {
	var lines []string
	total := 0
	for k := len(st.Sentences) - 1; k >= 0; k-- {
		s := st.Sentences[k]
		text := render(s)
		if text == "" {
			continue
		}
		line := fmt.Sprintf("[%d] %s\n", s.I+1, text)
		if total+len(line) > maxBytes {
			lines = append(lines, fmt.Sprintf("[lines 1 to %d are left out: the conversation is longer than a prompt holds]\n", s.I+1))
			break
		}
		total += len(line)
		lines = append(lines, line)
	}
	slices.Reverse(lines)
	return strings.Join(lines, "")
}

// GlossaryTerm is a name or term of the conversation and how the
// translations render it.
type GlossaryTerm struct {
	Kind      string `json:"kind"` // name or term
	Source    string `json:"source"`
	Rendering string `json:"rendering"`
	Line      int    `json:"line"` // the first line that says it
}

// Glossary is the glossary lane's data: the terms and how far the
// transcript had got at the last run (through: its last line; through_t:
// that line's t).
type Glossary struct {
	Terms    []GlossaryTerm `json:"terms"`
	Target   string         `json:"target"`
	Through  int            `json:"through"`
	ThroughT float64        `json:"through_t"`
}

// glossaryDue says whether the glossary should run on st: live, once the
// newest sentence starts glossaryEvery seconds after the newest one of the
// last run (after the session start before the first run); after stop,
// when any sentence came after the last run.
func glossaryDue(st *live.State, final bool) bool {
	if len(st.Sentences) == 0 {
		return false
	}
	last := st.Sentences[len(st.Sentences)-1]
	lb, ran := st.Lanes["glossary"]
	g, _ := lb.Data.(Glossary)
	if final {
		return !ran || g.Through < last.I+1
	}
	since := 0.0
	if ran {
		since = g.ThroughT
	}
	return last.T-since >= glossaryEvery
}

func glossaryLane(final bool) *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(schema.Prop("terms", schema.Array(schema.Object(
		schema.Prop("kind", schema.Enum("name", "term")),
		schema.Prop("source", schema.UText(glossaryTermChar)),
		schema.Prop("rendering", schema.UText(glossaryTermChar)),
	), glossaryPerRun))))
	return &live.LaneSpec{
		ID: "glossary", Title: "Glossary", Schema: sch, MaxTokens: maxTok,
		Prompt: func(st *live.State, _ int) (string, string) {
			if !glossaryDue(st, final) {
				return "", ""
			}
			tgt := languageName(targetCode(st))
			system := fmt.Sprintf("You keep the glossary of a live interpreted conversation from %s into %s: the names "+
				"(people, places, businesses, products) and the terms (technical words, idioms) that matter, and how the "+
				"translations render them. The user message holds the transcript (one numbered line per sentence), the "+
				"translations so far and the glossary so far. List at most %d entries that are missing from the glossary "+
				"or that the translations now render differently: kind (name or term), source (exactly as the transcript "+
				"writes it) and rendering (as the %s translations write it; a name usually stays as it is). Answer with one "+
				"JSON object; an empty list when the glossary is complete.", sourceLanguage(st), tgt, glossaryPerRun, tgt)
			var b strings.Builder
			b.WriteString("Transcript:\n" + recentLines(st, glossaryPromptBytes, func(s live.Sentence) string { return strings.TrimSpace(s.Text) }))
			tr := translations(st)
			if len(tr) > 0 {
				b.WriteString("\nTranslations so far:\n" + recentLines(st, glossaryPromptBytes, func(s live.Sentence) string { return tr[s.I].Translation }))
			}
			b.WriteString("\nGlossary so far:")
			terms := live.LaneOf[Glossary](st, "glossary").Terms
			if len(terms) == 0 {
				b.WriteString(" empty.\n")
			}
			for _, t := range terms {
				fmt.Fprintf(&b, "\n- %s: %s → %s", t.Kind, t.Source, t.Rendering)
			}
			return system, b.String()
		},
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Terms []glossaryAnswerTerm `json:"terms"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			g := mergeGlossary(st, live.LaneOf[Glossary](st, "glossary").Terms, a.Terms)
			return glossaryMarkdown(g), g, nil
		},
	}
}

// glossaryAnswerTerm is one entry of the glossary lane's model answer.
type glossaryAnswerTerm struct {
	Kind      string `json:"kind"`
	Source    string `json:"source"`
	Rendering string `json:"rendering"`
}

// mergeGlossary adds the answer's terms to the glossary: a term whose
// source the glossary holds replaces it; a term whose source the
// transcript never says is dropped (the model made it up); at most
// glossaryMaxTerms are kept.
func mergeGlossary(st *live.State, have []GlossaryTerm, add []glossaryAnswerTerm) Glossary {
	g := Glossary{Terms: slices.Clone(have), Target: targetCode(st)}
	if n := len(st.Sentences); n > 0 {
		g.Through, g.ThroughT = st.Sentences[n-1].I+1, st.Sentences[n-1].T
	}
	if g.Terms == nil {
		g.Terms = []GlossaryTerm{}
	}
	for _, x := range add {
		t := GlossaryTerm{Kind: x.Kind, Source: live.CleanText(x.Source), Rendering: live.CleanText(x.Rendering)}
		if t.Kind != "name" {
			t.Kind = "term"
		}
		src := cite.Norm(cite.Trim(t.Source))
		if src == "" || t.Rendering == "" {
			continue
		}
		for _, s := range st.Sentences {
			if strings.Contains(cite.Norm(s.Text), src) {
				t.Line = s.I + 1
				break
			}
		}
		if t.Line == 0 {
			continue
		}
		if k := slices.IndexFunc(g.Terms, func(o GlossaryTerm) bool { return cite.Norm(cite.Trim(o.Source)) == src }); k >= 0 {
			g.Terms[k] = t
		} else if len(g.Terms) < glossaryMaxTerms {
			g.Terms = append(g.Terms, t)
		}
	}
	return g
}

func glossaryMarkdown(g Glossary) string {
	if len(g.Terms) == 0 {
		return "_No names or terms yet._\n"
	}
	var b strings.Builder
	for _, t := range g.Terms {
		fmt.Fprintf(&b, "- %s → %s (%s, line %d)\n", t.Source, t.Rendering, t.Kind, t.Line)
	}
	return b.String()
}

// --- summary ------------------------------------------------------------

// summaryPromptBytes bounds the transcript in a summary prompt (the
// newest lines; UTF-8 bytes), so that with the glossary and the answer it
// fits an 8,192-token context in any script.
const summaryPromptBytes = 12000

// TranslateSummary is the summary lane's data.
type TranslateSummary struct {
	Summary string `json:"summary"`
	Target  string `json:"target"`
}

func translateSummaryLane() *live.LaneSpec {
	sch, maxTok := schema.Lane(schema.Object(schema.Prop("summary", schema.UText(summaryChars))))
	return &live.LaneSpec{
		ID: "summary", Title: "Summary", Schema: sch, MaxTokens: maxTok,
		Prompt: func(st *live.State, _ int) (string, string) {
			lines := recentLines(st, summaryPromptBytes, func(s live.Sentence) string { return strings.TrimSpace(s.Text) })
			if lines == "" {
				return "", ""
			}
			tgt := languageName(targetCode(st))
			system := fmt.Sprintf("You sum up an interpreted conversation for its participants. The user message holds "+
				"the transcript in %s (one numbered line per sentence, from speech recognition) and its glossary. Write "+
				"a short paragraph in %s: who spoke (by name when given), what was discussed, what was agreed and what "+
				"happens next, with amounts, dates and times exact and names as the glossary renders them. Answer with "+
				"one JSON object {\"summary\": \"...\"} without straight double quotation marks.", sourceLanguage(st), tgt)
			user := "Transcript:\n" + lines
			if terms := live.LaneOf[Glossary](st, "glossary").Terms; len(terms) > 0 {
				user += "\nGlossary:"
				for _, t := range terms {
					user += "\n- " + t.Source + " → " + t.Rendering
				}
			}
			return system, user
		},
		Finish: func(st *live.State, _ int, answer json.RawMessage) (string, any, error) {
			var a struct {
				Summary string `json:"summary"`
			}
			if err := live.DecodeAnswer(answer, &a); err != nil {
				return "", nil, err
			}
			s := TranslateSummary{Summary: live.CleanText(a.Summary), Target: targetCode(st)}
			return s.Summary, s, nil
		},
	}
}

// translateSummary is done.summary: translation (every final sentence in
// order, its translation "" when that sentence's lane run failed),
// summary (the text), glossary (the terms), lang and target.
func translateSummary(st *live.State) map[string]any {
	tr := translations(st)
	all := make([]TranslatedSentence, 0, len(st.Sentences))
	for _, s := range st.Sentences {
		ts, ok := tr[s.I]
		if !ok {
			ts = TranslatedSentence{I: s.I, T: s.T, Source: s.Text, Target: targetCode(st)}
		}
		all = append(all, ts)
	}
	terms := live.LaneOf[Glossary](st, "glossary").Terms
	if terms == nil {
		terms = []GlossaryTerm{}
	}
	return map[string]any{
		"translation": all,
		"summary":     live.LaneOf[TranslateSummary](st, "summary").Summary,
		"glossary":    terms,
		"lang":        st.Lang,
		"target":      targetCode(st),
	}
}
