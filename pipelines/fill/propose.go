package fill

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"boxd/engine/attest"
	"boxd/internal/run"
	"boxd/pipelines/fill/rules/inject"
	"boxd/pipelines/llmcall"
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
	pr := buildPrompt(fields, lines)
	if len(pr.ask) == 0 || len(lines) == 0 {
		return nil, "", nil, nil
	}
	if p.Inputs != nil {
		p.Inputs(pr.text)
	}
	enum := func(xs []string) string { j, _ := json.Marshal(xs); return string(j) }
	schema := fmt.Sprintf(`{"type":"object","properties":{"answers":{"type":"array","minItems":%d,"maxItems":%d,"items":{"type":"object","properties":{"fid":{"enum":%s},"doc":{"enum":%s},"line":{"type":"integer","minimum":0,"maximum":%d},"value":{"type":"string","maxLength":200}},"required":["fid","doc","line","value"],"additionalProperties":false}}},"required":["answers"],"additionalProperties":false}`,
		len(pr.ask), len(pr.ask), enum(pr.fids), enum(pr.docs), pr.maxLine)
	hash := attest.HashText(pr.text)
	raw, res, err := p.Chat.JSON(ctx, p.Budget, json.RawMessage(schema), llmcall.Request{
		Stream: answered(run.ProgressOf(p.Events), len(pr.ask)),
		Messages: []llmcall.Message{
			{Role: "system", Content: proposeSystem},
			{Role: "user", Content: pr.text},
		},
		MaxTokens: 64 + 240*len(pr.ask), // a value may take 200 characters
		Params:    map[string]string{"task": "fill-propose"},
		Events:    p.Events,
	})
	if err != nil {
		return nil, hash, res, err
	}
	var out struct {
		Answers []Proposal `json:"answers"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, hash, res, fmt.Errorf("fill: the model's answer: %w", err)
	}
	for i, a := range out.Answers {
		if name, ok := pr.alias[a.Doc]; ok {
			out.Answers[i].Doc = name
		}
	}
	run.ProgressOf(p.Events).Units("fields", len(pr.ask), len(pr.ask))
	return out.Answers, hash, res, nil
}

// answered counts the fields the model has answered as its answer is
// generated, into the run's progress: each answer begins with its "fid"
// key (the grammar's order), so an answer is whole once the next begins.
// A "fid" inside a value is escaped (\"fid\"), so it is never counted.
func answered(prog run.Progress, total int) func(piece string) error {
	const key = `"fid"`
	prog.Units("fields", 0, total)
	begun, tail := 0, ""
	return func(piece string) error {
		s := tail + piece
		begun += strings.Count(s, key) // tail is shorter than key: counted once
		tail = s[max(0, len(s)-len(key)+1):]
		prog.Units("fields", min(max(0, begun-1), total), total)
		return nil
	}
}

const proposeSystem = "You fill web forms from a person's own documents. You only point at lines that hold the answer; you never invent a value."

// withheldAgents stands for page text aimed at agents in the prompt.
const withheldAgents = "[withheld: page text aimed at agents]"

// prompt is what the model is shown (its SHA-256 is the run's
// prompt_sha256) and what its grammar allows.
type prompt struct {
	text       string
	ask        []Field
	fids, docs []string
	maxLine    int
	// alias maps a document's name as the prompt gives it (its secrets
	// withheld, numbered) back to its name.
	alias map[string]string
}

// buildPrompt writes the prompt: the fields that ask for no secret (a
// label or an option aimed at agents withheld), and every line with
// every writing of every secret of the documents withheld (Withheld); a
// document's name that holds a secret is given with it withheld.
func buildPrompt(fields []Field, lines []Line) prompt {
	secrets := Withheld(fields, lines)
	pr := prompt{alias: map[string]string{}}
	for _, f := range fields {
		if f.Secret == "" {
			pr.ask = append(pr.ask, f)
		}
	}
	var b strings.Builder
	b.WriteString("Fields of the form (fid, label, kind, options):\n")
	for _, f := range pr.ask {
		pr.fids = append(pr.fids, f.FID)
		label := f.Label
		if labelFlagged(f) {
			label = withheldAgents
		}
		label, _ = secrets.Redact(label)
		fmt.Fprintf(&b, "- %s: %q (%s)", f.FID, label, f.Kind)
		if len(f.Options) > 0 {
			var os []string
			for _, o := range f.Options {
				text := o.Text
				if text == "" {
					continue
				}
				if flagged, _ := inject.AimedAtAgents(text, inject.InVisibleText); flagged {
					text = withheldAgents
				}
				text, _ = secrets.Redact(text)
				os = append(os, fmt.Sprintf("%q", text))
			}
			fmt.Fprintf(&b, " options %s", strings.Join(os, ", "))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nThe person's documents, one numbered line each ([document:line]):\n")
	names := map[string]string{}
	for _, l := range lines {
		name, seen := names[l.Doc]
		if !seen {
			name = l.Doc
			if red, found := secrets.Redact(l.Doc); len(found) > 0 {
				name = fmt.Sprintf("%s (document %d)", red, len(pr.docs)+1)
				pr.alias[name] = l.Doc
			}
			names[l.Doc] = name
			pr.docs = append(pr.docs, name)
		}
		pr.maxLine = max(pr.maxLine, l.N)
		b.WriteString(l.forModel(secrets, name))
		b.WriteString("\n")
	}
	b.WriteString("\nFor each field, give the document and line that holds its value and the value exactly as it is written there (for options, the option's text). When no line holds it, give line 0 and an empty value. Never guess.")
	pr.text = b.String()
	return pr
}
