package a11y

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"
	"testing"

	"boxd/engine/attest"
	"boxd/pipelines/a11y/judge"
	"boxd/pipelines/llmcall/llmcalltest"
)

// typed records events in order, with their bodies.
type typed struct {
	types  []string
	bodies []any
}

func (e *typed) Emit(typ string, body any) {
	e.types = append(e.types, typ)
	e.bodies = append(e.bodies, body)
}

func pngData(t *testing.T, c color.RGBA) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 48, 48))
	draw.Draw(img, img.Bounds(), &image.Uniform{c}, image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestJudge: with an image-reading model (the tiny random one: its
// verdicts are noise, the path is real), each image large enough and
// named or marked decorative is judged by one receipted, charged call;
// its receipt event comes before its image event; checked counts the
// images and names the prompts by hash; model findings carry their
// receipts. judge: false asks nothing; a model that cannot see is named
// in not_checked.
func TestJudge(t *testing.T) {
	s := service(t)
	chat, iss := llmcalltest.Tiny(t, true)
	s.Chat = chat
	yes := true
	page := `<!doctype html><html lang="en"><head><title>Shoes</title></head><body><main><h1>Shoes</h1>
<img src="` + pngData(t, color.RGBA{200, 30, 30, 255}) + `" alt="Red running shoe" width="48" height="48">
<img src="` + pngData(t, color.RGBA{30, 30, 200, 255}) + `" alt="" width="48" height="48">
<img src="` + pngData(t, color.RGBA{30, 200, 30, 255}) + `" alt="Tiny" width="12" height="12">
</main></body></html>`
	b := &llmcalltest.Budget{}
	ev := &typed{}
	out, err := s.Audit(context.Background(), Request{HTML: page, Synthetic: &yes}, ev, Caller{Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	if out.Checked.ImagesJudged != 2 || out.ModelCalls != 2 || len(iss.Calls()) != 2 || len(b.Committed()) != 2 || len(out.Checked.PromptHashes) != 2 {
		t.Fatalf("judged %d, calls %d, receipts %d, commits %d, prompts %v", out.Checked.ImagesJudged, out.ModelCalls, len(iss.Calls()), len(b.Committed()), out.Checked.PromptHashes)
	}
	got := strings.Join(ev.types, " ")
	if !strings.HasPrefix(got, "start page receipt image receipt image names errors ") {
		t.Errorf("events %s", got)
	}
	var alts []string
	for i, typ := range ev.types {
		if typ == "image" {
			im := ev.bodies[i].(ImageEvent)
			alts = append(alts, im.Alt)
			if im.Receipt == "" || im.PromptHash != judgeHash(im.Alt, im.Decorative) || (im.Describes == nil) != im.Decorative {
				t.Errorf("image event %+v", im)
			}
		}
	}
	if strings.Join(alts, "|") != "Red running shoe|" {
		t.Errorf("judged %q", alts)
	}
	for _, f := range append(out.Findings, out.Advisories...) {
		if f.Source == "model" && f.Receipt == "" {
			t.Errorf("a model finding without its receipt: %+v", f)
		}
	}
	if nc := strings.Join(out.NotChecked, "\n"); strings.Contains(nc, "vision judge") {
		t.Errorf("not_checked %s", nc)
	}

	no := false
	off, err := s.Audit(context.Background(), Request{HTML: page, Synthetic: &yes, Judge: &no}, &typed{}, Caller{Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	if off.ModelCalls != 0 || len(iss.Calls()) != 2 || !strings.Contains(strings.Join(off.NotChecked, "\n"), "judge is false") {
		t.Errorf("judge false: calls %d, receipts %d, not_checked %v", off.ModelCalls, len(iss.Calls()), off.NotChecked)
	}
	if s.TokensFor(&Request{HTML: page}) != judge.TokensPerPage || s.TokensFor(&Request{URLs: []string{"a", "b"}}) != 2*judge.TokensPerPage || s.TokensFor(&Request{Judge: &no}) != 0 {
		t.Error("tokens needed to start")
	}

	blind, _ := llmcalltest.Tiny(t, false)
	s.Chat = blind
	bo, err := s.Audit(context.Background(), Request{HTML: page, Synthetic: &yes}, &typed{}, Caller{Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	if bo.ModelCalls != 0 || !strings.Contains(strings.Join(bo.NotChecked, "\n"), "does not read images") || s.TokensFor(&Request{HTML: page}) != 0 {
		t.Errorf("blind model: calls %d, not_checked %v", bo.ModelCalls, bo.NotChecked)
	}
}

func judgeHash(alt string, decorative bool) string {
	return attest.HashText(judge.Question(alt, decorative))
}
