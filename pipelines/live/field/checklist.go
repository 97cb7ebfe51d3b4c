package field

// Inspection checklists for the field vertical. The checklist lane is
// computed here without a model call: the inspection type is picked from
// the words of the transcript, and an item is ticked at the first line
// whose words name it (each item has a pattern of the words inspectors use
// for it). The safety sweep then compares the ticked items with the
// findings the model lanes recorded.

import (
	"regexp"
	"strconv"
	"strings"

	"boxd/pipelines/cite"
	"boxd/pipelines/live"
)

// Inspection types.
const (
	InspectionRoof       = "roof"
	InspectionElectrical = "electrical_panel"
	InspectionGeneric    = "generic"
)

// checkItem is one checklist item: its id, wording, whether it bears on
// safety, and the words that cover it.
type checkItem struct {
	id, item string
	safety   bool
	words    *regexp.Regexp
}

func words(alternatives string) *regexp.Regexp {
	return regexp.MustCompile(`\b(?:` + alternatives + `)\b`)
}

// checklists are the items of each inspection type, in the order an
// inspection usually goes.
var checklists = map[string][]checkItem{
	InspectionRoof: {
		{"covering", "Roof covering (shingles, tiles, metal, membrane)", false, words(`shingles?|tiles?|roof covering|membrane|metal roof(ing)?|asphalt`)},
		{"flashing", "Flashing at chimneys, walls, valleys and skylights", true, words(`flashing`)},
		{"decking", "Decking and structure (soft spots, rot, sagging)", true, words(`decking|deck boards?|sheathing|soft spots?|sag(s|ging)?|rot|rotten|rotting|rafters?|truss(es)?`)},
		{"moisture", "Moisture and leaks (stains, wet areas)", true, words(`moisture|leaks?|leaking|water stains?|stains?|wet`)},
		{"slope", "Roof slope and pitch", false, words(`roof slope|pitch|[0-9]+ in 12`)},
		{"drainage", "Gutters, downspouts and drainage", false, words(`gutters?|downspouts?|drainage`)},
		{"ventilation", "Attic ventilation (ridge and soffit vents)", false, words(`ventilation|ridge vents?|soffits?( vents?)?|attic vents?`)},
		{"penetrations", "Penetrations (plumbing vent boots, pipes, skylights)", false, words(`vent boots?|boots?|penetrations?|skylights?|pipe collars?`)},
		{"edges", "Drip edge, eaves and fascia", false, words(`drip edges?|eaves?|fascia`)},
		{"chimney", "Chimney (crown, cap, masonry)", false, words(`chimneys?|crown|chimney cap|mortar|masonry`)},
		{"access", "Safe access and fall hazards", true, words(`ladders?|harness|fall hazards?|fall protection|safe|unsafe|safety`)},
	},
	InspectionElectrical: {
		{"service", "Service size and main breaker rating", false, words(`[0-9]+ amps?|amperage|main breaker|service|rating`)},
		{"clearance", "Working clearance in front of the panel", true, words(`clearance|clear space|working space`)},
		{"labeling", "Circuit directory and labels", false, words(`labels?|labeling|labelled|labeled|directory`)},
		{"breakers", "Breakers (sizing, double taps, listing)", true, words(`breakers?|double tap(s|ped)?|double-tap(s|ped)?|two wires under one screw`)},
		{"openings", "Openings, knockouts and the dead front cover", true, words(`knockouts?|openings?|dead ?front|covers?|filler plates?|blanks?`)},
		{"voltage", "Voltage at the panel", false, words(`volts?|voltage`)},
		{"grounding", "Grounding electrode system (ground rod, water pipe bond)", true, words(`ground rods?|grounding electrodes?|electrodes?|grounding`)},
		{"bonding", "Main bonding jumper and neutral-ground separation", true, words(`bonding|bonding jumper|neutrals?|ground bars?`)},
		{"gfci", "Ground fault (GFCI) protection", true, words(`ground fault|gfcis?|gfis?`)},
		{"afci", "Arc fault (AFCI) protection", true, words(`arc fault|afcis?`)},
		{"subpanel", "Subpanels and feeders", false, words(`sub ?panels?|sub-panels?|feeders?`)},
		{"conductors", "Conductors and terminations (damage, heat, aluminum)", true, words(`conductors?|wires?|wiring|aluminum|scorch(ed|ing)?|overheat(ed|ing)?|melted|corro(ded|sion)|terminations?`)},
	},
	InspectionGeneric: {
		{"site", "Site, address and people present", false, words(`address|street|road|lane|avenue|owner|client|contractor|inspector`)},
		{"scope", "What is inspected", false, words(`inspect(ion|ing|ed)?|checklist|scope`)},
		{"hazards", "Access and safety hazards", true, words(`hazards?|hazardous|safety|safe|unsafe|access`)},
		{"condition", "Condition and defects", false, words(`damaged?|cracked|cracks?|broken|worn|wear|rust(ed|y)?|corro(ded|sion)|leaks?|leaking|defects?|missing|loose`)},
		{"measurements", "Measurements against the spec", false, words(`measures?|measured|measurements?|readings?|spec|percent|inches|feet|volts?|amps?|degrees|psi`)},
		{"codes", "Code references", false, words(`code|section|standard`)},
		{"passes", "Items that pass", false, words(`pass(es|ed)?|good shape|good condition|within spec`)},
		{"repairs", "Repairs recommended", false, words(`recommend(s|ed)?|repairs?|replace(d)?|fix`)},
		{"follow_up", "Follow-up and reinspection", false, words(`follow(-| )?up|reinspect(ion)?|come back|schedule(d)?`)},
	},
}

// typeWords are the words that point to a roof or an electrical panel
// inspection.
var typeWords = map[string]*regexp.Regexp{
	InspectionRoof:       words(`roofs?|roofing|shingles?|gutters?|flashing|chimneys?|eaves?|soffits?|ridge|decking|attic|downspouts?|fascia|valleys?`),
	InspectionElectrical: words(`panels?|breakers?|circuits?|amps?|volts?|voltage|neutrals?|grounding|bonding|conductors?|wires?|wiring|nec|gfcis?|afcis?|outlets?|subpanels?`),
}

// inspectionType picks the type from the transcript: the type whose words
// occur most often, if they occur at least twice and more often than the
// other type's; otherwise generic.
func inspectionType(st *live.State) string {
	counts := map[string]int{}
	for _, s := range st.Sentences {
		text := cite.Norm(s.Text)
		for typ, re := range typeWords {
			counts[typ] += len(re.FindAllStringIndex(text, -1))
		}
	}
	r, e := counts[InspectionRoof], counts[InspectionElectrical]
	switch {
	case r >= 2 && r > e:
		return InspectionRoof
	case e >= 2 && e > r:
		return InspectionElectrical
	}
	return InspectionGeneric
}

// inspectionTitle names a type for people.
func inspectionTitle(typ string) string {
	switch typ {
	case InspectionRoof:
		return "Roof inspection"
	case InspectionElectrical:
		return "Electrical panel inspection"
	}
	return "Site inspection"
}

// ChecklistItem is one item of the checklist lane: ticked (covered) at
// the line that first named it.
type ChecklistItem struct {
	ID      string   `json:"id"`
	Item    string   `json:"item"`
	Safety  bool     `json:"safety"`
	Covered bool     `json:"covered"`
	Line    *int     `json:"line"`    // the line that covered it
	T       *float64 `json:"t"`       // that line's t
	Matched string   `json:"matched"` // the words that covered it
}

// Checklist is the checklist lane's data.
type Checklist struct {
	Type    string          `json:"type"`
	Title   string          `json:"title"`
	Covered int             `json:"covered"`
	Total   int             `json:"total"`
	Items   []ChecklistItem `json:"items"`
}

// buildChecklist ticks the checklist of the transcript's inspection type.
func buildChecklist(st *live.State) Checklist {
	typ := inspectionType(st)
	c := Checklist{Type: typ, Title: inspectionTitle(typ) + " checklist", Items: []ChecklistItem{}}
	for _, it := range checklists[typ] {
		ci := ChecklistItem{ID: it.id, Item: it.item, Safety: it.safety}
		for _, s := range st.Sentences {
			if m := it.words.FindString(cite.Norm(s.Text)); m != "" {
				n, t := s.I+1, s.T
				ci.Covered, ci.Line, ci.T, ci.Matched = true, &n, &t, m
				c.Covered++
				break
			}
		}
		c.Items = append(c.Items, ci)
	}
	c.Total = len(c.Items)
	return c
}

// itemLines are the lines whose words name checklist item id of type typ.
func itemLines(st *live.State, typ, id string) []int {
	out := []int{}
	for _, it := range checklists[typ] {
		if it.id != id {
			continue
		}
		for _, s := range st.Sentences {
			if it.words.MatchString(cite.Norm(s.Text)) {
				out = append(out, s.I+1)
			}
		}
	}
	return out
}

// checklistItemFor is the id of the first item of type typ that text
// names, or "".
func checklistItemFor(typ, text string) string {
	text = cite.Norm(text)
	for _, it := range checklists[typ] {
		if it.words.MatchString(text) {
			return it.id
		}
	}
	return ""
}

// checklistMarkdown renders the checklist as ticked boxes.
func checklistMarkdown(c Checklist) string {
	var b strings.Builder
	b.WriteString("**" + c.Title + "** (" + strconv.Itoa(c.Covered) + " of " + strconv.Itoa(c.Total) + " covered)\n\n")
	for _, it := range c.Items {
		box := "[ ]"
		if it.Covered {
			box = "[x]"
		}
		b.WriteString("- " + box + " " + it.Item)
		if it.Safety {
			b.WriteString(" (safety)")
		}
		if it.Line != nil {
			b.WriteString(" [line " + strconv.Itoa(*it.Line) + "]")
		}
		b.WriteString("\n")
	}
	return b.String()
}
