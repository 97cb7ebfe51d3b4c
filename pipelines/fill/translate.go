package fill

import (
	"context"
	"encoding/json"
	"fmt"

	"boxd/internal/run"
	"boxd/pipelines/fill/rules/inject"
	"boxd/pipelines/llmcall"
)

// LangNames are the 24 EU languages by code, for the model's instruction.
var LangNames = map[string]string{"bg": "Bulgarian", "cs": "Czech", "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
	"et": "Estonian", "fi": "Finnish", "fr": "French", "ga": "Irish", "hr": "Croatian", "hu": "Hungarian", "it": "Italian", "lt": "Lithuanian",
	"lv": "Latvian", "mt": "Maltese", "nl": "Dutch", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "sk": "Slovak", "sl": "Slovenian", "sv": "Swedish"}

// Translation is the review's words in the person's language: each
// field's label and why, each flag's why. Values, citations and the flags'
// page text are never translated (they are what the documents and the
// page say).
type Translation struct {
	Lang   string            `json:"lang"`
	Fields []TranslatedField `json:"fields"`
	Flags  []TranslatedFlag  `json:"flags"`
	// Receipt is the model call's receipt id.
	Receipt string `json:"receipt"`
}

// TranslatedField is one field's label and why.
type TranslatedField struct {
	FID   string `json:"fid"`
	Label string `json:"label"`
	Why   string `json:"why"`
}

// TranslatedFlag is one flag's why.
type TranslatedFlag struct {
	N   int    `json:"n"`
	Why string `json:"why"`
}

// Translate puts the review's words into lang with one grammar-bound,
// receipted call. The labels are the page's own words and may carry
// text aimed at agents: a flagged label is not sent.
func Translate(ctx context.Context, chat *llmcall.Model, b run.Budget, ev llmcall.Events, lang string, rv Review) (*Translation, error) {
	name, ok := LangNames[lang]
	if !ok {
		return nil, fmt.Errorf("fill: no language %q", lang)
	}
	type item struct {
		FID   string `json:"fid"`
		Label string `json:"label"`
		Why   string `json:"why"`
	}
	var items []item
	var fids []string
	for _, f := range rv.Fields {
		label := f.Label
		if flagged, _ := inject.AimedAtAgents(label, inject.InAttribute); flagged {
			label = ""
		}
		items = append(items, item{FID: f.FID, Label: label, Why: f.Why})
		fids = append(fids, f.FID)
	}
	type flagItem struct {
		N   int    `json:"n"`
		Why string `json:"why"`
	}
	var flags []flagItem
	for _, f := range rv.Flags {
		flags = append(flags, flagItem{N: f.N, Why: f.Why})
	}
	in, err := json.Marshal(map[string]any{"fields": items, "flags": flags})
	if err != nil {
		return nil, err
	}
	fj, _ := json.Marshal(fids)
	schema := fmt.Sprintf(`{"type":"object","properties":{"fields":{"type":"array","minItems":%d,"maxItems":%d,"items":{"type":"object","properties":{"fid":{"enum":%s},"label":{"type":"string","maxLength":120},"why":{"type":"string","maxLength":200}},"required":["fid","label","why"],"additionalProperties":false}},"flags":{"type":"array","minItems":%d,"maxItems":%d,"items":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":%d},"why":{"type":"string","maxLength":200}},"required":["n","why"],"additionalProperties":false}}},"required":["fields","flags"],"additionalProperties":false}`,
		len(items), len(items), fj, len(flags), len(flags), max(1, len(flags)))
	raw, res, err := chat.JSON(ctx, b, json.RawMessage(schema), llmcall.Request{
		Messages: []llmcall.Message{
			{Role: "system", Content: "You translate a form-filling review from English. Translate each label and each why; keep fids and numbers. Translate only; add nothing."},
			{Role: "user", Content: "Translate into " + name + ":\n" + string(in)},
		},
		// Room for the longest strings the grammar allows (each character
		// may be a token).
		MaxTokens: 64 + 360*len(items) + 230*len(flags), Params: map[string]string{"task": "fill-translate", "lang": lang}, Events: ev,
	})
	if err != nil {
		return nil, err
	}
	t := &Translation{Lang: lang, Receipt: res.Receipt.ID}
	if err := json.Unmarshal(raw, t); err != nil {
		return nil, fmt.Errorf("fill: the translation: %w", err)
	}
	t.Lang, t.Receipt = lang, res.Receipt.ID
	return t, nil
}
