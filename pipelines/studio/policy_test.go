package studio

import (
	"context"
	"errors"
	"testing"

	"boxd/internal/run"
	"boxd/pipelines/chat"
)

func TestRules(t *testing.T) {
	cases := []struct {
		name, prompt, lyrics string
		cat                  Category
		judge                bool
	}{
		{"plain", "a calm piano piece at dawn with soft rain", "", "", false},
		{"sentence starts", "Calm piano. Slow strings! Warm pads: A long fade", "", "", false},
		{"voice of", "a song in the voice of my grandfather", "", VoiceImitation, false},
		{"voice of, no-break space", "a song in the voice\u00a0of my grandfather", "", VoiceImitation, false},
		{"sounds like", "a track that sounds like a famous singer", "", VoiceImitation, false},
		{"sing like", "make her sing like a star", "", VoiceImitation, false},
		{"clone voice", "clone her voice for the chorus", "", VoiceImitation, false},
		{"voice clone", "a voice-clone of the narrator", "", VoiceImitation, false},
		{"deepfake", "a deepfake of the mayor", "", VoiceImitation, false},
		{"impersonation", "an impersonation of a newsreader", "", VoiceImitation, false},
		{"cover of", "a cover of an old hymn", "", RealSong, false},
		{"remix of", "remix of the national anthem", "", RealSong, false},
		{"karaoke", "karaoke backing track", "", RealSong, false},
		{"lyrics of", "the lyrics of a famous ballad", "", RealSong, false},
		{"mashup", "a mash-up of two hits", "", RealSong, false},
		{"sampled from", "drums sampled from a classic record", "", RealSong, false},
		{"character", "Pikachu surfing a wave", "", CopyrightedCharacter, false},
		{"character lower case", "a spider-man poster", "", CopyrightedCharacter, false},
		{"franchise", "a jedi duel on a moon", "", CopyrightedCharacter, false},
		{"artist list", "a ballad like taylor swift would write", "", RealArtist, false},
		{"style of name", "a painting in the style of Marta Kowalczyk", "", RealArtist, false},
		{"style of, upper case", "IN THE STYLE OF Greg", "", RealArtist, false},
		{"inspired by name", "a track inspired by Nils", "", RealArtist, false},
		{"song by name", "a song by Someone Unknown", "", RealArtist, false},
		{"curly quoted name", "in the style of “Rosa”", "", RealArtist, false},
		{"logo", "a company logo for a bakery", "", Infringing, false},
		{"watermark", "a photo with a stock watermark", "", Infringing, false},
		{"lyrics rule", "an upbeat pop song", "this is a cover of the old tune", RealSong, false},
		{"name inside sentence", "a portrait of Marcus at sunset", "", "", true},
		{"style of genre", "in the style of a baroque fugue", "", "", true},
		{"style of movement", "a poster in the style of Bauhaus", "", "", true},
		{"quoted title", "a track called “Blue Morning”", "", "", true},
		{"homage", "an homage to old jazz", "", "", true},
		{"like", "drums like thunder", "", "", true},
		{"lyrics need the judge", "an upbeat pop song", "la la la, the sun is up", "", true},
		// Everyday words that are also character or artist names are not
		// refused by the rules; capitalised inside a sentence, the judge
		// sees them.
		{"everyday words", "a goofy dog and a drake on a pond, a joker card, nirvana of the hulk of a ship", "", "", false},
		{"name-like word capitalised", "a cartoon of Goofy the dog", "", "", true},
		// Invisible characters are dropped before the rules read the text;
		// anything beyond ASCII (accents, look-alike letters from other
		// scripts) needs the judge, since the lists are ASCII.
		{"zero-width non-joiner", "a drawing of mickey\u200c mouse waving", "", CopyrightedCharacter, false},
		{"word joiner", "a drawing of mickey\u2060 mouse", "", CopyrightedCharacter, false},
		{"soft hyphen", "bat\u00adman on a roof", "", CopyrightedCharacter, false},
		{"accented name", "a portrait of beyoncé on stage", "", "", true},
		{"cyrillic look-alike", "a drawing of m\u0456ckey mouse", "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat, id, judge := Rules(Spec{Kind: Music, Prompt: c.prompt, Lyrics: c.lyrics})
			if cat != c.cat || judge != c.judge {
				t.Errorf("Rules(%q, %q) = %q (rule %q), judge %v; want %q, judge %v", c.prompt, c.lyrics, cat, id, judge, c.cat, c.judge)
			}
			if cat != "" && id == "" {
				t.Error("a refusal must name its rule")
			}
		})
	}
}

type fakeJudge struct {
	ready bool
	cat   Category
	err   error
	calls int
}

func (f *fakeJudge) Ready() bool { return f.ready }

func (f *fakeJudge) Judge(ctx context.Context, kind Kind, prompt, lyrics string, budget run.Budget) (Category, string, error) {
	f.calls++
	return f.cat, "chatcmpl-test", f.err
}

func TestPolicyCheck(t *testing.T) {
	boom := errors.New("model failed")
	plain := Spec{Kind: Image, Prompt: "a red kite over green hills"}
	unclear := Spec{Kind: Image, Prompt: "a portrait of Marcus at sunset"}
	refused := Spec{Kind: Music, Prompt: "a cover of an old hymn"}
	cases := []struct {
		name      string
		judge     *fakeJudge
		nilJudge  bool
		spec      Spec
		allowed   bool
		cat       Category
		calls     int
		judged    bool
		errIs     error
		wantRecpt bool
	}{
		{"rules clear it, no judge call", &fakeJudge{ready: true, cat: RealArtist}, false, plain, true, "", 0, false, nil, false},
		{"rules clear it, no judge at all", nil, true, plain, true, "", 0, false, nil, false},
		{"rules refuse before the judge", &fakeJudge{ready: true}, false, refused, false, RealSong, 0, false, nil, false},
		{"judge needed, none", nil, true, unclear, false, Unavailable, 0, false, ErrNoJudge, false},
		{"judge needed, not ready", &fakeJudge{}, false, unclear, false, Unavailable, 0, false, ErrNoJudge, false},
		{"judge allows", &fakeJudge{ready: true}, false, unclear, true, "", 1, true, nil, true},
		{"judge refuses", &fakeJudge{ready: true, cat: RealArtist}, false, unclear, false, RealArtist, 1, true, nil, true},
		{"judge fails closed", &fakeJudge{ready: true, err: boom}, false, unclear, false, Unavailable, 1, true, boom, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Policy{}
			if !c.nilJudge {
				p.Judge = c.judge
			}
			d := p.Check(context.Background(), c.spec, nil)
			if d.Allowed != c.allowed || d.Category != c.cat || d.Judged != c.judged {
				t.Errorf("decision = %+v", d)
			}
			if c.errIs != nil && !errors.Is(d.Err, c.errIs) || c.errIs == nil && d.Err != nil {
				t.Errorf("err = %v, want %v", d.Err, c.errIs)
			}
			if (d.Receipt != "") != c.wantRecpt {
				t.Errorf("receipt = %q", d.Receipt)
			}
			if c.judge != nil && c.judge.calls != c.calls {
				t.Errorf("judge calls = %d, want %d", c.judge.calls, c.calls)
			}
		})
	}
}

func TestChatJudgeWithoutModel(t *testing.T) {
	for _, j := range []*ChatJudge{nil, {}, {Chat: &chat.Service{ModelID: "model-27b"}}} {
		if j.Ready() {
			t.Errorf("%+v is ready without an engine", j)
		}
	}
	_, _, err := (&ChatJudge{Chat: &chat.Service{ModelID: "model-27b"}}).Judge(context.Background(), Image, "x", "", nil)
	if !errors.Is(err, ErrNoJudge) {
		t.Errorf("err = %v", err)
	}
}

func TestPolicyLists(t *testing.T) {
	want := []Category{VoiceImitation, RealSong, CopyrightedCharacter, RealArtist, Infringing, Unavailable}
	if len(JobCategories) != len(want) {
		t.Fatalf("%d job categories", len(JobCategories))
	}
	for i, c := range want {
		if JobCategories[i].Category != string(c) || JobCategories[i].Meaning == "" {
			t.Errorf("job category %d = %+v", i, JobCategories[i])
		}
	}
	for _, c := range []string{"copyright", "voice_imitation", "real_person", "harmful", "privacy", "other"} {
		if !IsReportCategory(c) {
			t.Errorf("%s is not a report category", c)
		}
	}
	if IsReportCategory("real_artist") || len(ReportCategories) != 6 {
		t.Error("report categories are the contract's six")
	}
}
