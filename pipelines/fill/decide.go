package fill

import (
	"fmt"
	"strings"

	"boxd/pipelines/fill/rules"
	"boxd/pipelines/fill/rules/inject"
)

// Statuses of a field in the review (contract 2, section 2).
const (
	StatusSourced   = "sourced"   // typed, its value in the cited line
	StatusChosen    = "chosen"    // a select's option, supported by the cited line
	StatusLeft      = "left"      // no document answers it: left for the person
	StatusSensitive = "sensitive" // a secret: never typed, never shown to a model
	StatusBlocked   = "blocked"   // refused by a rule (a value its line does not hold)
	StatusFlagged   = "flagged"   // near text aimed at AI agents: left for the person
)

// Proposal is a model's answer for one field: the line that answers it
// and the value to type (or the option to choose).
type Proposal struct {
	FID   string `json:"fid"`
	Doc   string `json:"doc"`
	Line  int    `json:"line"` // 0: no line answers it
	Value string `json:"value"`
}

// Decided is a field's outcome.
type Decided struct {
	Field
	Status string `json:"status"`
	Value  string `json:"value"`
	Filled bool   `json:"filled"`
	Why    string `json:"why"`
	Source *Line  `json:"source,omitempty"`
	How    string `json:"how,omitempty"` // how the line supports the value (rules.Supports)
}

// Decide applies the fill rules to the model's proposals: a secret is
// never typed; a value is typed only when its cited line holds it (or the
// same date, time, phone number or amount written another way); a select
// takes only one of its options, and only when the line supports the
// option's value or text; everything else is left, with why. Nothing the
// model says is trusted: each value is checked here against the line.
func Decide(fields []Field, lines []Line, props []Proposal, h rules.Hints) []Decided {
	byFID := map[string]Proposal{}
	for _, p := range props {
		if _, dup := byFID[p.FID]; !dup {
			byFID[p.FID] = p
		}
	}
	type at struct {
		doc string
		n   int
	}
	byLine := make(map[at]*Line, len(lines))
	for i := range lines {
		if k := (at{lines[i].Doc, lines[i].N}); byLine[k] == nil {
			byLine[k] = &lines[i] // the first, where two sources share a name
		}
	}
	find := func(doc string, n int) *Line { return byLine[at{doc, n}] }
	secrets := Withheld(fields, lines)
	out := make([]Decided, 0, len(fields))
	for _, f := range fields {
		d := Decided{Field: f}
		p, asked := byFID[f.FID]
		line := find(p.Doc, p.Line)
		value := strings.TrimSpace(p.Value)
		switch {
		case f.Secret != "":
			d.Status, d.Why = StatusSensitive, "asks for a "+f.Secret+": never typed and never shown to a model; the person enters it"
		case labelFlagged(f):
			d.Status, d.Why = StatusFlagged, "its label or an option is text aimed at AI agents: left for the person"
		case !asked || p.Line == 0 || value == "":
			d.Status, d.Why = StatusLeft, "no line of the documents answers it"
		case line == nil:
			d.Status, d.Why = StatusBlocked, fmt.Sprintf("the cited line %s:%d does not exist", p.Doc, p.Line)
		case len(rules.Values(value)) > 0:
			d.Status, d.Why = StatusSensitive, "the value looks like a secret ("+rules.Values(value)[0].Kind+"): not typed"
		case secretInLine(line.Text, value) != "":
			d.Status, d.Why = StatusSensitive, "the cited line holds it as a "+secretInLine(line.Text, value)+": not typed"
		case secrets.Holds(value) != "":
			d.Status, d.Why = StatusSensitive, "the documents hold it as a "+secrets.Holds(value)+": not typed"
		case len(f.Options) > 0:
			opt, how := chooseOption(f.Options, value, line.Text, h)
			if opt == nil {
				d.Status, d.Why = StatusBlocked, fmt.Sprintf("%q is not an option the cited line supports", value)
				break
			}
			d.Status, d.Value, d.Filled, d.Source, d.How = StatusChosen, opt.Value, true, line, how
			d.Why = "the option " + fmt.Sprintf("%q", opt.Text) + " is in the cited line"
		default:
			ok, how := rules.Supports(line.Text, value, h)
			if !ok {
				d.Status, d.Why = StatusBlocked, fmt.Sprintf("the cited line does not hold %q", value)
				break
			}
			d.Status, d.Value, d.Filled, d.Source, d.How = StatusSourced, value, true, line, how
			d.Why = "the value is in the cited line"
			if how != rules.ByLiteral {
				d.Why = "the cited line holds the same " + how + ", written another way"
			}
		}
		out = append(out, d)
	}
	return out
}

// secretInLine is the kind of secret the line holds where value is
// ("" when the value is not one of the line's secrets).
func secretInLine(line, value string) string {
	v := rules.Fold(value)
	for _, f := range rules.Values(line) {
		s := rules.Fold(line[f.Start:f.End])
		if strings.Contains(s, v) || strings.Contains(v, s) || rules.Digits(s) != "" && rules.Digits(s) == rules.Digits(v) {
			return f.Kind
		}
	}
	return ""
}

// labelFlagged says whether a field's label, or one of its options, is
// text aimed at AI agents. A label read from an aria-label or a title is
// not shown to the person, and is read as an attribute (with the looser
// wordings); one from a label element, a placeholder or the text before
// it as visible text.
func labelFlagged(f Field) bool {
	if f.LabelFlagged {
		return true
	}
	where := inject.InVisibleText
	if f.LabelFrom == "aria-label" || f.LabelFrom == "title" {
		where = inject.InAttribute
	}
	if ok, _ := inject.AimedAtAgents(f.Label, where); ok {
		return true
	}
	for _, o := range f.Options {
		if ok, _ := inject.AimedAtAgents(o.Text, inject.InVisibleText); ok {
			return true
		}
	}
	return false
}

// chooseOption is the option value names (by value or text) when the
// line supports it.
func chooseOption(opts []Option, value, line string, h rules.Hints) (*Option, string) {
	for i, o := range opts {
		if o.Value == "" && o.Text == "" {
			continue
		}
		if !strings.EqualFold(o.Value, value) && !strings.EqualFold(o.Text, value) {
			continue
		}
		for _, cand := range []string{o.Text, o.Value} {
			if cand == "" {
				continue
			}
			if ok, how := rules.Supports(line, cand, h); ok {
				return &opts[i], how
			}
		}
	}
	return nil, ""
}
