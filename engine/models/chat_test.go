package models

import (
	"errors"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	conv := []Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello."},
		{Role: "user", Content: "Weather?"},
	}
	cases := map[Template]string{
		TemplateChatML:  "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n",
		TemplateLlama3:  "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWeather?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		TemplateGemma:   "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n<start_of_turn>user\nWeather?<end_of_turn>\n<start_of_turn>model\n",
		TemplateMistral: "[INST] Hi [/INST]Hello.</s>[INST] Be brief.\n\nWeather? [/INST]",
	}
	for tmpl, want := range cases {
		got, err := Render(tmpl, conv)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s:\ngot  %q\nwant %q", tmpl, got, want)
		}
	}
	tool := []Message{{Role: "user", Content: "Weather in Boston?"}, {Role: "assistant", Content: `{"tool_calls":[]}`}, {Role: "tool", Content: "21C"}}
	for _, tmpl := range Families {
		got, err := Render(tmpl, tool)
		if err != nil || !strings.Contains(got, "21C") {
			t.Errorf("%s tool turn: %q %v", tmpl, got, err)
		}
	}
	if _, err := Render(TemplateNone, conv); !errors.Is(err, ErrUnknownTemplate) || !strings.Contains(err.Error(), "models.llm.template") {
		t.Errorf("none: %v", err)
	}
	if _, err := Render(TemplateUnknown, conv); !errors.Is(err, ErrUnknownTemplate) {
		t.Errorf("unknown: %v", err)
	}
	if _, err := Render(TemplateChatML, []Message{{Role: "wizard", Content: "x"}}); err == nil {
		t.Error("bad role accepted")
	}
	if _, err := Render(TemplateChatML, nil); err == nil {
		t.Error("no messages accepted")
	}
	if f, err := ParseTemplate("gemma"); err != nil || f != TemplateGemma {
		t.Error("parse gemma")
	}
	if _, err := ParseTemplate("vicuna"); err == nil {
		t.Error("parse vicuna")
	}
}
