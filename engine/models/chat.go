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

// Render writes a conversation as the prompt text of a template family,
// ending with the opening of the assistant's turn. Control tokens appear as
// text (tokenize with special-token parsing); the BOS token is not written
// (tokenizing with special tokens adds it where the model wants one).
// Tool results (role tool) become user turns in families without a tool
// role.
func Render(t Template, msgs []Message) (string, error) {
	if len(msgs) == 0 {
		return "", errors.New("no messages")
	}
	for _, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			return "", fmt.Errorf("role %q: use system, user, assistant or tool", m.Role)
		}
	}
	var b strings.Builder
	switch t {
	case TemplateChatML:
		for _, m := range msgs {
			fmt.Fprintf(&b, "<|im_start|>%s\n%s<|im_end|>\n", chatmlRole(m.Role), m.Content)
		}
		b.WriteString("<|im_start|>assistant\n")
	case TemplateLlama3:
		for _, m := range msgs {
			role := m.Role
			if role == "tool" {
				role = "ipython"
			}
			fmt.Fprintf(&b, "<|start_header_id|>%s<|end_header_id|>\n\n%s<|eot_id|>", role, strings.TrimSpace(m.Content))
		}
		b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
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
			fmt.Fprintf(&b, "<start_of_turn>%s\n%s<end_of_turn>\n", role, content)
		}
		if first && system != "" && len(rest) == 0 {
			fmt.Fprintf(&b, "<start_of_turn>user\n%s<end_of_turn>\n", system)
		}
		b.WriteString("<start_of_turn>model\n")
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
				fmt.Fprintf(&b, "%s</s>", strings.TrimSpace(m.Content))
				continue
			}
			content := strings.TrimSpace(m.Content)
			if i == lastUser && system != "" {
				content = system + "\n\n" + content
			}
			fmt.Fprintf(&b, "[INST] %s [/INST]", content)
		}
		if len(rest) == 0 {
			fmt.Fprintf(&b, "[INST] %s [/INST]", system)
		}
	case TemplateNone:
		return "", fmt.Errorf("%w: the model has no chat template; set models.llm.template to one of gemma, llama3, chatml, mistral", ErrUnknownTemplate)
	default:
		return "", fmt.Errorf("%w %q: boxd renders gemma, llama3, chatml and mistral; set models.llm.template to the family the model was trained on", ErrUnknownTemplate, t)
	}
	return b.String(), nil
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
