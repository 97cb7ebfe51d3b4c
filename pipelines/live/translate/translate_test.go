package translate_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
	"boxd/pipelines/live/translate"
)

// trnSpanish is a short repair visit in Spanish (translated into English).
var trnSpanish = []livetest.Line{
	{Text: "Buenas tardes, señora Alcaraz. Soy Ignacio, del Taller Quiroga.", Start: 0.3, End: 4.0},
	{Text: "La lavadora no desagua y hace un ruido fuerte.", Start: 4.5, End: 8.0},
	{Text: "El filtro de pelusa está lleno y había una moneda atascada.", Start: 8.5, End: 13.0},
	{Text: "Hay que cambiar la bomba de desagüe.", Start: 13.5, End: 16.5},
	{Text: "La bomba cuesta cuarenta y cinco euros; con la mano de obra son ciento veinte.", Start: 17.0, End: 22.5},
	{Text: "Vuelvo el jueves a las diez de la mañana.", Start: 23.0, End: 26.0},
}

// trnEnglish is a short guided tour in English (translated into Spanish).
var trnEnglish = []livetest.Line{
	{Text: "Welcome, everyone. My name is Imogen, and I'll be your guide through the Old Lantern Quarter.", Start: 0.2, End: 5.0},
	{Text: "Our first stop is the Gallowmere Clock Tower, built in 1783.", Start: 5.5, End: 9.5},
	{Text: "There are 212 steps to the viewing deck, and the climb costs four euros.", Start: 10.0, End: 14.5},
	{Text: "Next we cross the Saint Wendeline Footbridge.", Start: 15.0, End: 18.0},
	{Text: "Lunch is at the Harbor Lantern Museum cafe at noon.", Start: 18.5, End: 22.0},
	{Text: "Our meeting point is the fountain in Tillery Square.", Start: 22.5, End: 26.0},
}

// trnCheckSession checks a translate session: one translation event per
// sentence in order of i, the glossary, the summary after stop, and
// done.summary with every sentence in order, the summary and the glossary.
func trnCheckSession(t *testing.T, v *live.Vertical, lang, target string, script []livetest.Line, evs []live.Event) {
	t.Helper()
	var got []translate.TranslatedSentence
	counts, last := map[string]int{}, map[string]int{}
	lanes, receipts := 0, 0
	var glossary translate.Glossary
	var glossaries []translate.Glossary
	var summary translate.TranslateSummary
	for k, e := range evs {
		switch b := e.Body.(type) {
		case live.ReadyBody:
			if b.Vertical != "translate" || b.Lang != lang || b.Target != target {
				t.Errorf("ready %+v", b)
			}
		case live.ErrorBody:
			t.Errorf("error event: %s", b.Message)
		case live.ReceiptBody:
			receipts++
		case live.LaneBody:
			lanes++
			counts[b.Lane]++
			last[b.Lane] = k
			if b.Title == "" || b.Data == nil {
				t.Errorf("lane %s without title or data", b.Lane)
			}
			switch d := b.Data.(type) {
			case translate.TranslatedSentence:
				got = append(got, d)
				if keys := slices.Sorted(maps.Keys(livetest.ClientMap(t, d))); !reflect.DeepEqual(keys, []string{"i", "source", "t", "target", "translation"}) {
					t.Errorf("translation data keys %v", keys)
				}
			case translate.Glossary:
				glossary = d
				glossaries = append(glossaries, d)
			case translate.TranslateSummary:
				summary = d
			}
		}
	}
	for _, l := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
		if counts[l.ID] == 0 {
			t.Errorf("lane %s never emitted", l.ID)
		}
	}
	if receipts != lanes {
		t.Errorf("%d receipts for %d lane events (every lane here is one model call)", receipts, lanes)
	}
	if len(got) != len(script) {
		t.Fatalf("%d translation events for %d sentences", len(got), len(script))
	}
	for i, ts := range got {
		if ts.I != i || ts.T != script[i].Start || ts.Source != script[i].Text || ts.Target != target {
			t.Errorf("translation event %d: %+v", i, ts)
		}
	}
	// Live glossary runs are at least 20 s of transcript apart (the last
	// event may be the run after stop, which covers whatever is left).
	prevT := 0.0
	for k, g := range glossaries {
		if k < len(glossaries)-1 && g.ThroughT-prevT < 20 {
			t.Errorf("glossary run %d at %v s of transcript, %v s after the previous", k, g.ThroughT, g.ThroughT-prevT)
		}
		prevT = g.ThroughT
	}
	if counts["summary"] != 1 || last["summary"] < last["translation"] {
		t.Errorf("summary: %d events, last at %d, last translation at %d", counts["summary"], last["summary"], last["translation"])
	}
	done, ok := evs[len(evs)-1].Body.(live.DoneBody)
	if !ok {
		t.Fatalf("last event %s, want done", evs[len(evs)-1].Type)
	}
	if !reflect.DeepEqual(done.Summary["translation"], got) {
		t.Errorf("summary.translation %v, want the events %v", done.Summary["translation"], got)
	}
	if done.Summary["summary"] != summary.Summary || summary.Target != target || !reflect.DeepEqual(done.Summary["glossary"], glossary.Terms) {
		t.Errorf("summary %v / %v, glossary %v / %v", done.Summary["summary"], summary, done.Summary["glossary"], glossary.Terms)
	}
	if done.Summary["target"] != target {
		t.Errorf("summary target %v", done.Summary["target"])
	}
	if _, err := json.Marshal(done.Summary); err != nil {
		t.Fatal(err)
	}
}

func TestTranslateSessions(t *testing.T) {
	for _, c := range []struct {
		lang, target string
		script       []livetest.Line
	}{{"es", "en", trnSpanish}, {"en", "es", trnEnglish}} {
		t.Run(c.lang+"-"+c.target, func(t *testing.T) {
			v := translate.New()
			trnCheckSession(t, v, c.lang, c.target, c.script, livetest.RunSession(t, v, c.lang, c.target, c.script))
		})
	}
}

// Many sentences: the translation events still come one per sentence in
// order of i. The lanes' schemas are cut down here so that 40 model calls
// stay quick; their Prompt and Finish are the real ones.
func TestTranslateManySentencesInOrder(t *testing.T) {
	v := translate.New()
	small := json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"translation":{"type":"string","pattern":"^[a-z]{0,4}$"}},"required":["translation"]}`)
	v.Live[0].Schema, v.Live[0].MaxTokens = small, 64
	for _, l := range []*live.LaneSpec{v.Live[1], v.Final[0]} {
		l.Schema, l.MaxTokens = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"terms":{"type":"array","maxItems":1,"items":`+
			`{"type":"object","additionalProperties":false,"properties":{"kind":{"enum":["name"]},"source":{"type":"string","pattern":"^[a-z]{0,3}$"},`+
			`"rendering":{"type":"string","pattern":"^[a-z]{0,3}$"}},"required":["kind","source","rendering"]}}},"required":["terms"]}`), 128
	}
	v.Final[1].Schema, v.Final[1].MaxTokens = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"summary":{"type":"string","pattern":"^[a-z]{0,4}$"}},"required":["summary"]}`), 64
	var script []livetest.Line
	for i := range 40 {
		script = append(script, livetest.Line{Text: fmt.Sprintf("Frase número %d sobre la bomba.", i+1), Start: float64(i) * 1.5, End: float64(i)*1.5 + 1.2})
	}
	trnCheckSession(t, v, "es", "en", script, livetest.RunSession(t, v, "es", "en", script))
}

// The model is told the source and the target language.
func TestTranslatePromptsNameTheLanguages(t *testing.T) {
	v := translate.New()
	for _, c := range []struct{ lang, target, want string }{
		{"es", "en", "from Spanish into English"},
		{"en", "es", "from English into Spanish"},
		{"auto", "en", "from the speaker's language into English"},
		{"ja", "pt-BR", "from Japanese into Portuguese (Brazil)"},
	} {
		st := &live.State{Vertical: "translate", Lang: c.lang, Target: c.target, Lanes: map[string]live.LaneBody{},
			Sentences: []live.Sentence{{I: 0, T: 0.5, Text: "Hola."}, {I: 1, T: 2, Text: "¿Qué tal?"}}}
		sys, user := v.Live[0].Prompt(st, 1)
		if !strings.Contains(sys, c.want) || !strings.HasSuffix(user, "¿Qué tal?") || !strings.Contains(user, "Hola.") {
			t.Errorf("%s→%s: system %q user %q", c.lang, c.target, sys, user)
		}
		if sys, _ := v.Final[1].Prompt(st, -1); !strings.Contains(sys, "paragraph in "+strings.Split(c.want, " into ")[1]) {
			t.Errorf("%s→%s: summary system %q", c.lang, c.target, sys)
		}
		_, data, err := v.Live[0].Finish(st, 1, json.RawMessage(`{"translation":"  How are   you? "}`))
		if err != nil || !reflect.DeepEqual(data, translate.TranslatedSentence{I: 1, T: 2, Source: "¿Qué tal?", Translation: "How are you?", Target: c.target}) {
			t.Errorf("%s→%s: translation data %+v, %v", c.lang, c.target, data, err)
		}
	}
}

// The glossary runs about every 20 s of transcript time: walking a
// transcript of a sentence every 3 s, the live lane's prompt is empty
// until the newest sentence starts 20 s after the last run's; after stop
// it runs once more only when sentences came after its last run.
func TestGlossaryEveryTwentySeconds(t *testing.T) {
	v := translate.New()
	liveLane, finalLane := v.Live[1], v.Final[0]
	st := &live.State{Vertical: "translate", Lang: "es", Target: "en", Lanes: map[string]live.LaneBody{}}
	var runs []float64
	for k := 0; k <= 27; k++ {
		tk := float64(k * 3)
		st.Sentences = append(st.Sentences, live.Sentence{I: k, T: tk, Text: fmt.Sprintf("Ignacio revisa el filtro %d.", k)})
		if _, user := liveLane.Prompt(st, -1); user == "" {
			continue
		}
		body, data, err := liveLane.Finish(st, -1, json.RawMessage(`{"terms":[{"kind":"name","source":"Ignacio","rendering":"Ignacio"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		st.Lanes["glossary"] = live.LaneBody{Lane: "glossary", Body: body, Data: data}
		runs = append(runs, tk)
	}
	if !reflect.DeepEqual(runs, []float64{21, 42, 63}) {
		t.Errorf("glossary ran at %v s, want every 20 s of transcript: 21, 42, 63", runs)
	}
	if _, user := finalLane.Prompt(st, -1); user == "" {
		t.Error("after stop the glossary does not cover the sentences after 63 s")
	}
	_, data, _ := finalLane.Finish(st, -1, json.RawMessage(`{"terms":[]}`))
	st.Lanes["glossary"] = live.LaneBody{Lane: "glossary", Data: data}
	if _, user := finalLane.Prompt(st, -1); user != "" {
		t.Error("after stop the glossary runs again with nothing new")
	}
	if g := data.(translate.Glossary); g.Through != 28 || g.ThroughT != 81 || len(g.Terms) != 1 {
		t.Errorf("glossary %+v", g)
	}
	// A short session never reaches 20 s: only the run after stop fills it.
	short := &live.State{Vertical: "translate", Lang: "es", Target: "en", Lanes: map[string]live.LaneBody{},
		Sentences: []live.Sentence{{I: 0, T: 0.5, Text: "Hola."}, {I: 1, T: 9, Text: "Adiós."}}}
	if _, user := liveLane.Prompt(short, -1); user != "" {
		t.Error("the live glossary ran before 20 s of transcript")
	}
	if _, user := finalLane.Prompt(short, -1); user == "" {
		t.Error("the glossary after stop did not run")
	}
}

// Glossary terms the transcript never says are dropped; a term already in
// the glossary is replaced; each keeps the first line that says it.
func TestGlossaryMerge(t *testing.T) {
	v := translate.New()
	st := livetest.ScriptState(trnSpanish)
	st.Lang, st.Target = "es", "en"
	_, data, err := v.Final[0].Finish(st, -1, json.RawMessage(`{"terms":[
		{"kind":"name","source":"Taller Quiroga","rendering":"Quiroga Workshop"},
		{"kind":"term","source":"bomba de desagüe","rendering":"drain pump"},
		{"kind":"name","source":"Zaragoza","rendering":"Saragossa"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	st.Lanes["glossary"] = live.LaneBody{Lane: "glossary", Data: data}
	_, data, _ = v.Final[0].Finish(st, -1, json.RawMessage(`{"terms":[{"kind":"name","source":"taller quiroga","rendering":"Quiroga Repair Shop"}]}`))
	want := []translate.GlossaryTerm{
		{Kind: "name", Source: "taller quiroga", Rendering: "Quiroga Repair Shop", Line: 1},
		{Kind: "term", Source: "bomba de desagüe", Rendering: "drain pump", Line: 4},
	}
	if g := data.(translate.Glossary); !reflect.DeepEqual(g.Terms, want) || g.Target != "en" || g.Through != 6 {
		t.Errorf("glossary %+v", g)
	}
}

// done.summary lists every sentence even when one translation failed.
func TestTranslateSummaryKeepsEverySentence(t *testing.T) {
	st := livetest.ScriptState(trnSpanish[:3])
	st.Lang, st.Target = "es", "en"
	st.PerSentence = map[string]map[int]live.LaneBody{"translation": {
		0: {Data: translate.TranslatedSentence{I: 0, T: 0.3, Source: trnSpanish[0].Text, Translation: "Good afternoon.", Target: "en"}},
		2: {Data: translate.TranslatedSentence{I: 2, T: 8.5, Source: trnSpanish[2].Text, Translation: "The filter is full.", Target: "en"}},
	}}
	got := translate.New().Summary(st)["translation"].([]translate.TranslatedSentence)
	if len(got) != 3 || got[0].Translation != "Good afternoon." || got[1].Translation != "" || got[1].Source != trnSpanish[1].Text || got[2].I != 2 {
		t.Errorf("translation %+v", got)
	}
}

// Glossary and summary prompts keep to the newest lines of a long
// conversation and say that earlier ones are left out.
func TestTranslatePromptsAreBounded(t *testing.T) {
	v := translate.New()
	st := &live.State{Vertical: "translate", Lang: "ja", Target: "en", Lanes: map[string]live.LaneBody{}}
	for k := range 2000 {
		st.Sentences = append(st.Sentences, live.Sentence{I: k, T: float64(k) * 3, Text: fmt.Sprintf("修理の説明 %d です。", k)})
	}
	for _, l := range []*live.LaneSpec{v.Live[1], v.Final[0], v.Final[1]} {
		_, user := l.Prompt(st, -1)
		if len(user) > 16000 || !strings.Contains(user, "are left out") || !strings.Contains(user, "[2000] 修理の説明 1999 です。") {
			t.Errorf("%s: prompt of %d bytes: %.200q", l.ID, len(user), user)
		}
	}
}
