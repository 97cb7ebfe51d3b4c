package models

import "strings"

// Template is a chat-template family: how a conversation becomes a prompt.
type Template string

// The families a box runs (DESIGN: Gemma 3 is the 27B default).
const (
	TemplateGemma   Template = "gemma"
	TemplateLlama3  Template = "llama3"
	TemplateChatML  Template = "chatml"
	TemplateMistral Template = "mistral"
	// TemplateNone: the file carries no tokenizer.chat_template.
	TemplateNone Template = "none"
	// TemplateUnknown: a template boxd cannot render.
	TemplateUnknown Template = "unknown"
)

// DetectTemplate names the family of a GGUF tokenizer.chat_template (Jinja
// source) by the control tokens it writes.
func DetectTemplate(jinja string) Template {
	switch {
	case strings.TrimSpace(jinja) == "":
		return TemplateNone
	case strings.Contains(jinja, "<start_of_turn>"):
		return TemplateGemma
	case strings.Contains(jinja, "<|start_header_id|>"):
		return TemplateLlama3
	case strings.Contains(jinja, "<|im_start|>"):
		return TemplateChatML
	case strings.Contains(jinja, "[INST]"):
		return TemplateMistral
	}
	return TemplateUnknown
}
