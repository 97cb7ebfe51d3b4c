package studio

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"boxd/internal/problem"
	"boxd/internal/run"
)

// Category is why the prompt policy refused a job (the 422 body's
// category).
type Category string

// The refusal categories of the contract. Unavailable means the policy
// could not be applied (it fails closed): try again.
const (
	RealArtist           Category = "real_artist"
	RealSong             Category = "real_song"
	VoiceImitation       Category = "voice_imitation"
	CopyrightedCharacter Category = "copyrighted_character"
	Infringing           Category = "infringing"
	Unavailable          Category = "unavailable"
)

// PolicyURL is where the rules are served.
const PolicyURL = "/studio/policy"

// Described is a category with what it means.
type Described struct {
	Category string `json:"category"`
	Meaning  string `json:"meaning"`
}

// JobCategories are the refusal categories of POST /studio/jobs, in the
// order the rules are applied.
var JobCategories = []Described{
	{string(VoiceImitation), "imitating or cloning a real person's voice (\"voice of\", \"sounds like\", \"sing like\", voice clones, deepfakes, impersonation)"},
	{string(RealSong), "reproducing an existing song or recording (\"cover of\", \"remix of\", karaoke, lyrics or melody of a song, samples, mash-ups, parodies of a song)"},
	{string(CopyrightedCharacter), "a character, franchise or studio owned by others (for example Mickey Mouse, Pikachu, Spider-Man, Star Wars)"},
	{string(RealArtist), "the style or identity of a real, named artist (\"in the style of <Name>\", \"inspired by <Name>\", \"a song by <Name>\", a well-known artist's name)"},
	{string(Infringing), "other infringement: logos, trademarks, watermarks, stock-photo marks, pirated or bootleg material"},
	{string(Unavailable), "the policy check could not run (the model that judges unclear prompts is not loaded or failed); nothing was queued; try again later"},
}

// ReportCategories are the categories of POST /studio/report.
var ReportCategories = []Described{
	{"copyright", "the item copies a work, song, character or style owned by someone else"},
	{"voice_imitation", "the item imitates a real person's voice"},
	{"real_person", "the item depicts or names a real person"},
	{"harmful", "the item is harmful, hateful, sexual or violent"},
	{"privacy", "the item reveals private information"},
	{"other", "anything else; say what in details"},
}

// IsReportCategory reports whether c is a report category.
func IsReportCategory(c string) bool {
	for _, d := range ReportCategories {
		if d.Category == c {
			return true
		}
	}
	return false
}

// PolicyText is the prompt policy as text, served by GET /studio/policy.
const PolicyText = `Media studio prompt policy

Every job's prompt (and, for music, its lyrics) is checked before it is queued. A refused job answers 422 with the category below and is not queued; it does not count toward the 3 jobs of a studio token.

1. No voice imitation: do not ask for a real person's voice ("voice of", "in the voice of", "sounds like", "sing like", voice clones, deepfakes, impersonation, sound-alikes). Category voice_imitation.
2. No real songs: no covers, remixes, remakes, karaoke versions, mash-ups or parodies of existing songs, and no lyrics, melodies or samples taken from them. Category real_song.
3. No characters owned by others: no characters, franchises or studios of films, games, comics or cartoons. Category copyrighted_character.
4. No real artists: do not name a real artist or ask for their style ("in the style of <Name>", "inspired by <Name>", "a song by <Name>"). Describe the sound or look instead: genre, period, instruments, mood, palette, technique. Category real_artist.
5. Nothing else infringing: no logos, trademarks, watermarks, stock-photo marks, pirated or bootleg material. Category infringing.

How it is applied. A fixed rule layer reads the prompt first and refuses what matches the rules above; it is deliberately conservative, so a harmless prompt that uses these phrases is refused too: rephrase it. A prompt the rules cannot clear (lyrics, a quoted title, a capitalised name inside a sentence, words such as "style", "like", "tribute" or "version") goes to a model judge on this box, which answers with one of the categories or none. When that judge is not loaded or fails, the check fails closed with category unavailable: nothing is queued; try again later, or rephrase the prompt so the rules alone can clear it.

Reporting. Every gallery item and job has a report_url (GET describes the form; POST /studio/report files a report). Reports are stored on this box; at most 5 reports per address per hour.`

// rule is one pattern of the rule layer.
type rule struct {
	id  string
	cat Category
	re  *regexp.Regexp
}

func rx(s string) *regexp.Regexp { return regexp.MustCompile(`(?i)` + s) }

// rejectRules refuse outright. They run on normalised text (curly quotes
// and apostrophes folded, whitespace collapsed), first match wins.
var rejectRules = []rule{
	{"voice-of", VoiceImitation, rx(`\bvoices?\s+of\b`)},
	{"sounds-like", VoiceImitation, rx(`\bsound(s|ing)?\s+(just\s+|exactly\s+|a\s+lot\s+)?like\b`)},
	{"sing-like", VoiceImitation, rx(`\b(sing|sings|singing|sung|rap|raps|rapping)\s+(just\s+)?like\b`)},
	{"voice-clone", VoiceImitation, rx(`\b(voice|vocal)s?\s*[- ]?(clon\w*|model|swap\w*|match\w*|replica\w*)\b|\bclon(e|ed|es|ing)\s+(\w+\s+){0,2}voices?\b`)},
	{"impersonate", VoiceImitation, rx(`\bimpersonat\w*|\bdeep\s*-?fakes?\b|\bsound\s*-?alikes?\b|\bvoiced\s+by\b|\bmimic\w*\s+(\w+\s+){0,2}voices?\b`)},
	{"cover-of", RealSong, rx(`\bcover(ed)?\s+(version\s+|song\s+)?of\b|\bcover\s+(song|version)\b`)},
	{"remix-of", RealSong, rx(`\b(remix|remake|rework|rendition|reprise|mash\s*-?up|medley|parody)(es|ed|s)?\s+(version\s+)?of\b|\bmash\s*-?ups?\b`)},
	{"karaoke", RealSong, rx(`\bkaraoke\b`)},
	{"song-parts", RealSong, rx(`\b(lyrics|melody|tune|chorus|riff|hook|bassline|beat|refrain)\s+(of|from|to)\b`)},
	{"sample", RealSong, rx(`\bsampl(e|es|ed|ing)\s+(of|from)\b`)},
	{"soundtrack", RealSong, rx(`\b(soundtrack|theme\s+(song|music|tune))\s+(of|from)\b`)},
	{"character", CopyrightedCharacter, rx(`\b(` + strings.Join(characters, "|") + `)\b`)},
	{"artist-name", RealArtist, rx(`\b(` + strings.Join(artists, "|") + `)\b`)},
	{"infringing", Infringing, rx(`\b(logo|logos|trademark\w*|watermark\w*|getty\s+images|shutterstock|istock|adobe\s+stock|copyrighted|pirat(e|ed|ing)|bootleg\w*|counterfeit\w*)\b`)},
}

// characters are well-known characters, franchises and studios (lower
// case, regexp syntax). Names that are also everyday words or given names
// ("goofy", "joker", "minions", "hulk", "thor", "bowser", "zelda") are left
// to the judge, which sees any capitalised name inside a sentence.
var characters = []string{
	`mickey\s+mouse`, `minnie\s+mouse`, `donald\s+duck`, `disney`, `pixar`, `dreamworks`, `marvel`, `dc\s+comics`,
	`pok[eé]mon`, `pikachu`, `super\s+mario`, `mario\s+bros`, `princess\s+peach`, `pac\s*-?man`,
	`sonic\s+the\s+hedgehog`, `spider\s*-?man`, `batman`, `superman`, `wonder\s+woman`, `iron\s+man`, `captain\s+america`,
	`avengers`, `x\s*-?men`, `wolverine`, `deadpool`, `harry\s+potter`, `hogwarts`, `hermione`, `star\s+wars`,
	`darth\s+vader`, `yoda`, `jedi`, `star\s+trek`, `shrek`, `simpsons`, `homer\s+simpson`, `spongebob`, `hello\s+kitty`,
	`winnie\s+the\s+pooh`, `totoro`, `studio\s+ghibli`, `naruto`, `goku`, `dragon\s+ball`, `sailor\s+moon`, `minecraft`, `fortnite`,
	`barbie`, `transformers`, `optimus\s+prime`, `godzilla`, `james\s+bond`, `007`, `peppa\s+pig`, `paw\s+patrol`, `bluey`,
	`garfield`, `snoopy`, `peanuts\s+gang`, `scooby\s*-?doo`, `bugs\s+bunny`, `looney\s+tunes`, `tom\s+and\s+jerry`, `lego`,
	`frozen'?s\s+elsa`, `elsa\s+and\s+anna`, `buzz\s+lightyear`, `toy\s+story`, `lord\s+of\s+the\s+rings`, `gandalf`,
	`frodo`, `game\s+of\s+thrones`, `teenage\s+mutant\s+ninja\s+turtles`, `ninja\s+turtles`, `smurfs?`, `muppets?`, `kermit`,
}

// artists are real artists well known enough to be named in prompts
// (lower case, regexp syntax); names that are everyday words ("drake",
// "nirvana", "madonna" of religious art) are left to the judge.
var artists = []string{
	`taylor\s+swift`, `beyonc[eé]`, `rihanna`, `adele`, `ed\s+sheeran`, `billie\s+eilish`, `ariana\s+grande`,
	`kanye(\s+west)?`, `eminem`, `the\s+beatles`, `beatles`, `michael\s+jackson`, `elvis(\s+presley)?`, `lady\s+gaga`,
	`bts`, `bad\s+bunny`, `the\s+weeknd`, `bruno\s+mars`, `justin\s+bieber`, `frank\s+sinatra`, `bob\s+dylan`, `david\s+bowie`,
	`freddie\s+mercury`, `queen\s+band`, `led\s+zeppelin`, `pink\s+floyd`, `metallica`, `coldplay`, `daft\s+punk`,
	`hans\s+zimmer`, `john\s+williams`, `mozart`, `beethoven`, `bach`, `chopin`, `picasso`, `van\s+gogh`, `monet`, `rembrandt`,
	`da\s+vinci`, `dal[ií]`, `frida\s+kahlo`, `banksy`, `andy\s+warhol`, `warhol`, `basquiat`, `hokusai`, `greg\s+rutkowski`,
	`hayao\s+miyazaki`, `miyazaki`, `wes\s+anderson`, `tim\s+burton`, `quentin\s+tarantino`, `christopher\s+nolan`,
	`stanley\s+kubrick`, `steven\s+spielberg`, `annie\s+leibovitz`, `ansel\s+adams`, `norman\s+rockwell`,
}

// styleIntro introduces a style or an identity; followed by a capitalised
// word (not a movement or period) it names an artist.
var styleIntro = rx(`\b(in\s+the\s+(style|manner|vein|spirit)\s+of|(style|styled)\s+(of|after)|[aà]\s+la|inspired\s+by|reminiscent\s+of|influenced\s+by|homage\s+to|tribute\s+to|like\s+a\s+(song|track|painting|film|video|picture|photo)\s+by|(a|an|the)\s+(song|track|painting|film|video|picture|photo|album|record|piece)\s+by|made\s+by|painted\s+by|performed\s+by|directed\s+by|composed\s+by|written\s+by|produced\s+by|drawn\s+by|photographed\s+by|shot\s+by|sung\s+by|by\s+the\s+(artist|band|singer|rapper|composer|painter|director))\s+(["']?)(\S+)`)

// movements are capitalised words that name a genre, movement, period or
// place style rather than an artist.
var movements = map[string]bool{
	"baroque": true, "renaissance": true, "gothic": true, "romantic": true, "classical": true, "impressionist": true,
	"impressionism": true, "expressionist": true, "cubist": true, "cubism": true, "surrealist": true, "surrealism": true,
	"art": true, "bauhaus": true, "victorian": true, "edwardian": true, "medieval": true, "ukiyo-e": true, "byzantine": true,
	"celtic": true, "latin": true, "afrobeat": true, "motown": true, "bossa": true, "film": true, "noir": true, "jazz": true,
	"blues": true, "lo-fi": true, "synthwave": true, "vaporwave": true, "minimalist": true, "brutalist": true, "pop": true,
	"a": true, "an": true, "the": true,
}

// judgeCues are words that make a prompt unclear to the rules: the model
// judge must clear it.
var judgeCues = rx(`\b(style|styled|stylised|stylized|like|inspired|tribute|homage|parody|fan\s*-?art|fanfic\w*|reminiscent|sequel|prequel|remaster\w*|version|famous|celebrity|singer|rapper|band|artist|album|song\s+called|track\s+called|official|original\s+soundtrack|ost|by)\b`)

// quoted text of two or more characters: a title, perhaps.
var quoted = regexp.MustCompile(`["“«][^"”»]{2,}["”»]|(^|\s)'[^']{2,}'`)

// ErrNoJudge is why a prompt that needs the judge was refused as
// unavailable when no chat model is loaded.
var ErrNoJudge = errors.New("the policy judge needs a chat model and none is loaded on this box")

// Decision is the outcome of the policy for one job.
type Decision struct {
	Allowed  bool
	Category Category // when not allowed
	Rule     string   // which rule decided (for logs): a rule id, "judge" or "judge-unavailable"
	Judged   bool     // the model judge ran
	Receipt  string   // the judge call's receipt id, when it ran
	// Err is why the judge could not run (Category Unavailable); a budget
	// refusal from the caller's budget is passed through here too.
	Err error
}

// Judge is the model judge for prompts the rules cannot clear.
type Judge interface {
	// Ready reports whether the judge can run (a chat model is loaded).
	Ready() bool
	// Judge returns the category of text ("" for none) and the receipt id
	// of its model call, charging budget.
	Judge(ctx context.Context, kind Kind, prompt, lyrics string, budget run.Budget) (Category, string, error)
}

// Policy applies the rule layer and, where the rules cannot clear a
// prompt, the judge.
type Policy struct {
	Judge Judge // nil: no judge (prompts that need one are refused as unavailable)
}

// Rules applies the rule layer alone to a spec: the refusal category and
// rule id, or "" and whether the judge must clear the spec.
func Rules(sp Spec) (cat Category, ruleID string, needJudge bool) {
	for _, text := range []string{sp.Prompt, sp.Lyrics} {
		if text == "" {
			continue
		}
		if c, id := rejectRule(normalise(text)); c != "" {
			return c, id, false
		}
	}
	return "", "", sp.Lyrics != "" || unclear(normalise(sp.Prompt))
}

// Check decides whether a job may be queued. A judge that is needed but
// not ready, or that fails, yields Unavailable (fail closed).
func (p *Policy) Check(ctx context.Context, sp Spec, budget run.Budget) Decision {
	cat, id, needJudge := Rules(sp)
	if cat != "" {
		return Decision{Category: cat, Rule: id}
	}
	if !needJudge {
		return Decision{Allowed: true, Rule: "rules"}
	}
	if p.Judge == nil || !p.Judge.Ready() {
		return Decision{Category: Unavailable, Rule: "judge-unavailable", Err: ErrNoJudge}
	}
	c, receipt, err := p.Judge.Judge(ctx, sp.Kind, sp.Prompt, sp.Lyrics, budget)
	if err != nil {
		return Decision{Category: Unavailable, Rule: "judge-unavailable", Judged: true, Receipt: receipt, Err: err}
	}
	if c == "" {
		return Decision{Allowed: true, Rule: "judge", Judged: true, Receipt: receipt}
	}
	return Decision{Category: c, Rule: "judge", Judged: true, Receipt: receipt}
}

func rejectRule(text string) (Category, string) {
	for _, r := range rejectRules {
		if r.re.MatchString(text) {
			return r.cat, r.id
		}
	}
	for _, m := range styleIntro.FindAllStringSubmatch(text, -1) {
		word := m[len(m)-1]
		first, _ := utf8.DecodeRuneInString(word)
		if m[len(m)-2] != "" || unicode.IsUpper(first) && !movements[strings.ToLower(strings.Trim(word, ".,;:!?\"'"))] {
			return RealArtist, "style-of-name"
		}
	}
	return "", ""
}

// unclear reports whether the rules cannot clear text on their own: it
// has judge cues, a quoted title, a capitalised word inside a sentence (a
// name, perhaps), or any character beyond ASCII (the lists and \b are
// ASCII: "beyoncé", a Cyrillic look-alike letter or another script would
// slip past them).
func unclear(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return true
		}
	}
	if judgeCues.MatchString(text) || styleIntro.MatchString(text) || quoted.MatchString(text) {
		return true
	}
	start := true
	for _, w := range strings.Fields(text) {
		core := strings.Trim(w, "\"'()«»“”.,;:!?")
		r, _ := utf8.DecodeRuneInString(core)
		if !start && unicode.IsUpper(r) && utf8.RuneCountInString(core) > 1 {
			return true
		}
		start = strings.ContainsAny(w[len(w)-1:], ".!?:")
	}
	return false
}

// normalise folds typographic quotes and apostrophes, drops invisible
// format characters (zero-width joiners and spaces, soft hyphens, word
// joiners: unicode.Cf) and collapses whitespace, so that the rules see one
// spelling ("mickey\u200c mouse" is "mickey mouse").
func normalise(s string) string {
	s = strings.NewReplacer("’", "'", "‘", "'", "“", "\"", "”", "\"", "«", "\"", "»", "\"", "\u00a0", " ").Replace(s)
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// refusalText tells the caller what to change, by category.
var refusalText = map[Category]string{
	VoiceImitation:       "the prompt policy refused this job: it asks to imitate a real person's voice; describe the voice (range, timbre, delivery) without naming or likening it to anyone",
	RealSong:             "the prompt policy refused this job: it asks for an existing song (a cover, remix, its lyrics or melody); ask for an original piece",
	CopyrightedCharacter: "the prompt policy refused this job: it names a character or franchise owned by others; describe an original character",
	RealArtist:           "the prompt policy refused this job: it names a real artist or asks for their style; describe genre, period, instruments, mood or technique instead",
	Infringing:           "the prompt policy refused this job: it asks for logos, trademarks, watermarks or other protected material",
	Unavailable:          "the prompt policy could not check this prompt (the model judge that clears unclear prompts is not available on this box right now); nothing was queued; try again later, or rephrase without names, titles or words such as style, like or version",
}

// Refusal is a refused job as the caller is told it: problem.Unprocessable
// (422) with the category and the policy's URL beside the message that
// says what to change.
func (d Decision) Refusal() *problem.Error {
	return problem.New(problem.Unprocessable, "%s", refusalText[d.Category]).
		With("category", string(d.Category)).With("policy_url", PolicyURL)
}
