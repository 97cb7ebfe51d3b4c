package fill

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"boxd/engine/attest"
	"boxd/pipelines/fill/rules"
	"boxd/pipelines/llmcall"
	"boxd/run"
)

// Proposer asks the model which line answers which field. What it is
// shown: the fields' labels, kinds and options (a field whose label is
// aimed at agents is shown without it; secret fields not at all), and the
// documents' lines with every secret value withheld. Nothing of the page's
// other text reaches it.
type Proposer struct {
	Chat   *llmcall.Model
	Budget run.Budget
	Events llmcall.Events
	// Inputs, when set, hears every prompt sent (tests check that no
	// secret is in any).
	Inputs func(prompt string)
}

// Propose asks for one answer per field, in one grammar-bound call; the
// answers are checked by Decide, never trusted.
func (p *Proposer) Propose(ctx context.Context, fields []Field, lines []Line) ([]Proposal, string, *llmcall.Result, error) {
	var ask []Field
	for _, f := range fields {
		if f.Secret == "" {
			ask = append(ask, f)
		}
	}
	if len(ask) == 0 || len(lines) == 0 {
		return nil, "", nil, nil
	}
	var fids, docs []string
	seenDoc := map[string]bool{}
	maxLine := 0
	var b strings.Builder
	b.WriteString("Fields of the form (fid, label, kind, options):\n")
	for _, f := range ask {
		fids = append(fids, f.FID)
		label := f.Label
		if flagged, _ := rules.AimedAtAgents(label, rules.InAttribute); flagged {
			label = "[withheld: page text aimed at agents]"
		}
		label, _ = rules.Redact(label)
		fmt.Fprintf(&b, "- %s: %q (%s)", f.FID, label, f.Kind)
		if len(f.Options) > 0 {
			var os []string
			for _, o := range f.Options {
				if o.Text != "" {
					os = append(os, fmt.Sprintf("%q", o.Text))
				}
			}
			fmt.Fprintf(&b, " options %s", strings.Join(os, ", "))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nThe person's documents, one numbered line each ([document:line]):\n")
	for _, l := range lines {
		if !seenDoc[l.Doc] {
			seenDoc[l.Doc] = true
			docs = append(docs, l.Doc)
		}
		maxLine = max(maxLine, l.N)
		b.WriteString(l.ForModel())
		b.WriteString("\n")
	}
	b.WriteString("\nFor each field, give the document and line that holds its value and the value exactly as it is written there (for options, the option's text). When no line holds it, give line 0 and an empty value. Never guess.")
	prompt := b.String()
	if p.Inputs != nil {
		p.Inputs(prompt)
	}
	enum := func(xs []string) string { j, _ := json.Marshal(xs); return string(j) }
	schema := fmt.Sprintf(`{"type":"object","properties":{"answers":{"type":"array","minItems":%d,"maxItems":%d,"items":{"type":"object","properties":{"fid":{"enum":%s},"doc":{"enum":%s},"line":{"type":"integer","minimum":0,"maximum":%d},"value":{"type":"string","maxLength":200}},"required":["fid","doc","line","value"],"additionalProperties":false}}},"required":["answers"],"additionalProperties":false}`,
		len(ask), len(ask), enum(fids), enum(docs), maxLine)
	raw, res, err := p.Chat.JSON(ctx, p.Budget, json.RawMessage(schema), llmcall.Request{
		Messages: []llmcall.Message{
			{Role: "system", Content: "You fill web forms from a person's own documents. You only point at lines that hold the answer; you never invent a value."},
			{Role: "user", Content: prompt},
		},
		MaxTokens: 64 + 240*len(ask), // a value may take 200 characters Params: map[string]string{"task": "fill-propose"}, Events: p.Events,
	})
	if err != nil {
		return nil, attest.HashText(prompt), res, err
	}
	var out struct {
		Answers []Proposal `json:"answers"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, attest.HashText(prompt), res, fmt.Errorf("fill: the model's answer: %w", err)
	}
	return out.Answers, attest.HashText(prompt), res, nil
}
