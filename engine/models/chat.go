package models

import (
	"errors"
	"fmt"
	"strings"
)

// Message is one turn of a conversation, already reduced to text: tool
// calls and tool results are written in the form the model is told to use
// (see pipelines/chat).
type Message struct {
	Role    string // system, user, assistant, tool
	Content string
}

// ErrUnknownTemplate is returned for a template family boxd cannot render.
var ErrUnknownTemplate = errors.New("unknown chat template")

// Families lists the families Render supports.
var Families = []Template{TemplateGemma, TemplateLlama3, TemplateChatML, TemplateMistral}

// Part is a piece of a rendered prompt: a control token of the template
// (Control: a turn marker, tokenized with special-token parsing) or text
// (role names, separators and the messages' content: tokenized as plain
// text, so a marker written inside a message stays text).
type Part struct {
	Text    string
	Control bool
}

// prompt collects parts, joining adjacent text.
type prompt []Part

func (p *prompt) ctl(s string) { *p = append(*p, Part{Text: s, Control: true}) }

func (p *prompt) text(s string) {
	if s == "" {
		return
	}
	if n := len(*p); n > 0 && !(*p)[n-1].Control {
		(*p)[n-1].Text += s
		return
	}
	*p = append(*p, Part{Text: s})
}

// Render writes a conversation as the prompt text of a template family,
// ending with the opening of the assistant's turn. Control tokens appear as
// text; the BOS token is not written (tokenizing with special tokens adds it
// where the model wants one). Tool results (role tool) become user turns in
// families without a tool role. Render is RenderParts joined: a prompt to
// tokenize comes from RenderParts, which tells the template's control
// tokens from the messages' text.
func Render(t Template, msgs []Message) (string, error) {
	parts, err := RenderParts(t, msgs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// RenderParts is Render as parts: the template's control tokens apart from
// the text around them (which holds the messages' content), so that only
// the template's own markers are read as control tokens.
func RenderParts(t Template, msgs []Message) ([]Part, error) {
	if len(msgs) == 0 {
		return nil, errors.New("no messages")
	}
	for _, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			return nil, fmt.Errorf("role %q: use system, user, assistant or tool", m.Role)
		}
	}
	var b prompt
	switch t {
	case TemplateChatML:
		for _, m := range msgs {
			b.ctl("<|im_start|>")
			b.text(chatmlRole(m.Role) + "\n" + m.Content)
			b.ctl("<|im_end|>")
			b.text("\n")
		}
		b.ctl("<|im_start|>")
		b.text("assistant\n")
	case TemplateLlama3:
		for _, m := range msgs {
			role := m.Role
			if role == "tool" {
				role = "ipython"
			}
			b.ctl("<|start_header_id|>")
			b.text(role)
			b.ctl("<|end_header_id|>")
			b.text("\n\n" + strings.TrimSpace(m.Content))
			b.ctl("<|eot_id|>")
		}
		b.ctl("<|start_header_id|>")
		b.text("assistant")
		b.ctl("<|end_header_id|>")
		b.text("\n\n")
	case TemplateGemma:
		// Gemma has no system role: the system text opens the first user
		// turn, as Gemma 3's own template does.
		system, rest := splitSystem(msgs)
		first := true
		for _, m := range rest {
			role := "user"
			if m.Role == "assistant" {
				role = "model"
			}
			content := strings.TrimSpace(m.Content)
			if first && role == "user" && system != "" {
				content = system + "\n\n" + content
				first = false
			}
			b.ctl("<start_of_turn>")
			b.text(role + "\n" + content)
			b.ctl("<end_of_turn>")
			b.text("\n")
		}
		if first && system != "" && len(rest) == 0 {
			b.ctl("<start_of_turn>")
			b.text("user\n" + system)
			b.ctl("<end_of_turn>")
			b.text("\n")
		}
		b.ctl("<start_of_turn>")
		b.text("model\n")
	case TemplateMistral:
		// [INST] user [/INST]assistant</s>; the system text joins the last
		// user turn, as Mistral's templates do.
		system, rest := splitSystem(msgs)
		lastUser := -1
		for i, m := range rest {
			if m.Role != "assistant" {
				lastUser = i
			}
		}
		for i, m := range rest {
			if m.Role == "assistant" {
				b.text(strings.TrimSpace(m.Content))
				b.ctl("</s>")
				continue
			}
			content := strings.TrimSpace(m.Content)
			if i == lastUser && system != "" {
				content = system + "\n\n" + content
			}
			b.ctl("[INST]")
			b.text(" " + content + " ")
			b.ctl("[/INST]")
		}
		if len(rest) == 0 {
			b.ctl("[INST]")
			b.text(" " + system + " ")
			b.ctl("[/INST]")
		}
	case TemplateNone:
		return nil, fmt.Errorf("%w: the model has no chat template; set models.llm.template to one of gemma, llama3, chatml, mistral", ErrUnknownTemplate)
	default:
		return nil, fmt.Errorf("%w %q: boxd renders gemma, llama3, chatml and mistral; set models.llm.template to the family the model was trained on", ErrUnknownTemplate, t)
	}
	return b, nil
}

// ControlTokens are the control tokens of a template family as text: its
// turn markers and the BOS, EOS and padding tokens its models use. A
// message's text that holds one is read as plain text (see RenderParts).
func ControlTokens(t Template) []string {
	switch t {
	case TemplateChatML:
		return []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>"}
	case TemplateLlama3:
		return []string{"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"}
	case TemplateGemma:
		return []string{"<bos>", "<eos>", "<pad>", "<start_of_turn>", "<end_of_turn>"}
	case TemplateMistral:
		return []string{"<s>", "</s>", "[INST]", "[/INST]"}
	}
	return nil
}

func chatmlRole(r string) string {
	if r == "tool" {
		return "user"
	}
	return r
}

// splitSystem joins the system messages and returns the other turns, with
// tool results as user turns.
func splitSystem(msgs []Message) (string, []Message) {
	var sys []string
	var rest []Message
	for _, m := range msgs {
		switch m.Role {
		case "system":
			sys = append(sys, strings.TrimSpace(m.Content))
		case "tool":
			rest = append(rest, Message{Role: "user", Content: m.Content})
		default:
			rest = append(rest, m)
		}
	}
	return strings.Join(sys, "\n\n"), rest
}

// ParseTemplate reads a family name (for the models.llm.template setting).
func ParseTemplate(s string) (Template, error) {
	for _, f := range Families {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w %q: use one of gemma, llama3, chatml, mistral", ErrUnknownTemplate, s)
}
