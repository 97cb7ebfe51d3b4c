// Package scripts holds boxd's demo scripts (contract document 1, section
// 2): eight synthetic two-speaker dialogues, two per live vertical, and
// their speech, synthesised with espeak-ng in two distinct voices and
// cached in the state directory. Replay (pipelines/replay) paces a
// script's audio through a live session; tests use the per-line timings to
// drive a scripted transcriber.
//
// Every person, business, place and address in the dialogues is invented.
package scripts

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Speaker is one voice of a dialogue: the role it plays (Doctor, Patient,
// Seller, …) and the espeak-ng voice and speed (words per minute) it is
// synthesised with.
type Speaker struct {
	Role  string
	Voice string
	Speed int
}

// Line is one turn of a dialogue.
type Line struct {
	Speaker int // index into Script.Speakers
	Text    string
}

// Script is one demo script. It marshals as the contract's Script object:
// id, vertical, title, lang, target (null outside translate), duration_s
// and has_audio.
type Script struct {
	ID       string
	Vertical string
	Title    string
	// Lang is the spoken language; Target the translation's language
	// (translate only, else "").
	Lang, Target string
	// DurationS is the length of the synthesised audio in seconds: exact
	// once the audio is cached, else an estimate from the word count.
	DurationS float64
	// HasAudio says whether replay can play the script here: espeak-ng is
	// installed or the audio is cached.
	HasAudio bool
	Speakers [2]Speaker
	Lines    []Line
}

// MarshalJSON writes the contract's Script object.
func (s Script) MarshalJSON() ([]byte, error) {
	var target *string
	if s.Target != "" {
		target = &s.Target
	}
	return json.Marshal(struct {
		ID        string  `json:"id"`
		Vertical  string  `json:"vertical"`
		Title     string  `json:"title"`
		Lang      string  `json:"lang"`
		Target    *string `json:"target"`
		DurationS float64 `json:"duration_s"`
		HasAudio  bool    `json:"has_audio"`
	}{s.ID, s.Vertical, s.Title, s.Lang, target, s.DurationS, s.HasAudio})
}

// Text is the dialogue as "Role: text" lines.
func (s *Script) Text() string {
	var b strings.Builder
	for _, l := range s.Lines {
		fmt.Fprintf(&b, "%s: %s\n", s.Speakers[l.Speaker].Role, l.Text)
	}
	return b.String()
}

// Voices of the dialogues: a lower male and a higher female espeak-ng
// variant per language.
var (
	enMale   = Speaker{Voice: "en-us+m3", Speed: 165}
	enFemale = Speaker{Voice: "en-us+f3", Speed: 165}
	esMale   = Speaker{Voice: "es+m3", Speed: 160}
	esFemale = Speaker{Voice: "es+f4", Speed: 160}
)

func role(sp Speaker, r string) Speaker { sp.Role = r; return sp }

// catalog is the eight scripts in the contract's order.
var catalog = []Script{
	{ID: "clinical-back-pain", Vertical: "clinical", Title: "Primary care visit: low back pain with sciatica", Lang: "en",
		Speakers: [2]Speaker{role(enFemale, "Doctor"), role(enMale, "Patient")}, Lines: dialogue(clinicalBackPain)},
	{ID: "clinical-diabetes-followup", Vertical: "clinical", Title: "Type 2 diabetes follow-up with new neuropathy", Lang: "en",
		Speakers: [2]Speaker{role(enFemale, "Doctor"), role(enMale, "Patient")}, Lines: dialogue(clinicalDiabetes)},
	{ID: "sales-discovery-logistics", Vertical: "sales", Title: "Discovery call: route planning for a delivery fleet", Lang: "en",
		Speakers: [2]Speaker{role(enFemale, "Seller"), role(enMale, "Buyer")}, Lines: dialogue(salesDiscovery)},
	{ID: "sales-renewal-security", Vertical: "sales", Title: "Renewal call: price increase and security review", Lang: "en",
		Speakers: [2]Speaker{role(enMale, "Seller"), role(enFemale, "Buyer")}, Lines: dialogue(salesRenewal)},
	{ID: "field-roof-inspection", Vertical: "field", Title: "Roof inspection after a ceiling leak", Lang: "en",
		Speakers: [2]Speaker{role(enMale, "Inspector"), role(enFemale, "Owner")}, Lines: dialogue(fieldRoof)},
	{ID: "field-electrical-panel", Vertical: "field", Title: "Electrical panel and subpanel inspection", Lang: "en",
		Speakers: [2]Speaker{role(enFemale, "Inspector"), role(enMale, "Contractor")}, Lines: dialogue(fieldElectrical)},
	{ID: "translate-es-en-repair", Vertical: "translate", Title: "Washing machine repair visit (Spanish to English)", Lang: "es", Target: "en",
		Speakers: [2]Speaker{role(esMale, "Technician"), role(esFemale, "Customer")}, Lines: dialogue(translateRepair)},
	{ID: "translate-en-es-tour", Vertical: "translate", Title: "Walking tour of a harbor town (English to Spanish)", Lang: "en", Target: "es",
		Speakers: [2]Speaker{role(enFemale, "Guide"), role(enMale, "Visitor")}, Lines: dialogue(translateTour)},
}

// dialogue parses "A: …" / "B: …" lines.
func dialogue(lines []string) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		who, text, ok := strings.Cut(l, ": ")
		if !ok || (who != "A" && who != "B") {
			panic("scripts: line without A: or B: " + l)
		}
		sp := 0
		if who == "B" {
			sp = 1
		}
		out[i] = Line{Speaker: sp, Text: text}
	}
	return out
}

// IDs are the script ids in the contract's order.
func IDs() []string {
	ids := make([]string, len(catalog))
	for i, s := range catalog {
		ids[i] = s.ID
	}
	return ids
}

// All returns the scripts with estimated durations; has_audio says whether
// espeak-ng is installed. Catalog gives exact durations from a cache.
func All() []Script {
	out := make([]Script, len(catalog))
	for i, s := range catalog {
		out[i] = clone(s)
		out[i].DurationS = estimate(&out[i])
		out[i].HasAudio = espeakAvailable()
	}
	return out
}

// Catalog returns the scripts as served by GET /demo/scripts: durations
// are exact where the audio is cached in cacheDir (else estimated), and
// has_audio is true where espeak-ng is installed or the audio is cached.
func Catalog(cacheDir string) []Script {
	out := All()
	for i := range out {
		if c, ok := readCache(cacheDir, &out[i]); ok {
			out[i].DurationS = round1(c.DurationS)
			out[i].HasAudio = true
		}
	}
	return out
}

// Lookup returns the script with id.
func Lookup(id string) (Script, bool) {
	for _, s := range catalog {
		if s.ID == id {
			s = clone(s)
			s.DurationS = estimate(&s)
			s.HasAudio = espeakAvailable()
			return s, true
		}
	}
	return Script{}, false
}

func clone(s Script) Script {
	s.Lines = append([]Line(nil), s.Lines...)
	return s
}

// estimate is the audio length from the word count at each voice's speed
// plus the silences Audio puts around lines.
func estimate(s *Script) float64 {
	secs := leadSilence + tailSilence
	for i, l := range s.Lines {
		words := float64(len(strings.Fields(l.Text)))
		secs += words * 60 / float64(s.Speakers[l.Speaker].Speed)
		if i > 0 {
			secs += pause
		}
	}
	return round1(secs)
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
