package chat

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"boxd/internal/problem"
)

// FuzzReadImage: an image part's data: URL (POST /v1/chat/completions)
// is read without panicking; a refusal is a 400 or 413 naming the part;
// an image read is at most MaxImageSide a side, its RGB bytes are its
// pixels, and its hash is the SHA-256 of the bytes the URL carried.
func FuzzReadImage(f *testing.F) {
	img := image.NewNRGBA(image.Rect(0, 0, 5, 3))
	img.Set(2, 1, color.NRGBA{G: 255, A: 255})
	enc := func(write func(*bytes.Buffer) error) string {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			f.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b.Bytes())
	}
	pngB64 := enc(func(b *bytes.Buffer) error { return png.Encode(b, img) })
	for _, s := range []string{
		"data:image/png;base64," + pngB64,
		"data:image/JPEG;base64," + enc(func(b *bytes.Buffer) error { return jpeg.Encode(b, img, nil) }),
		"data:image/gif;base64," + enc(func(b *bytes.Buffer) error { return gif.Encode(b, img, nil) }),
		"data:image/png;base64," + strings.TrimRight(pngB64, "="),
		"data:image/webp;base64,UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==",
		"data:image/png;base64,",
		"data:image/svg+xml;base64,PHN2Zz4=",
		"data:image/png,abc",
		"data:,",
		"https://example.com/x.png",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		pic, sum, err := readImage("messages[0].content[1]", url)
		if err != nil {
			if (err.Kind != problem.Invalid && err.Kind != problem.TooLarge) || !strings.HasPrefix(err.Message, "messages[0].content[1]: ") {
				t.Fatalf("refusal %+v", err)
			}
			return
		}
		if pic.Width <= 0 || pic.Height <= 0 || max(pic.Width, pic.Height) > MaxImageSide || len(pic.RGB) != pic.Width*pic.Height*3 {
			t.Fatalf("picture %d × %d with %d bytes", pic.Width, pic.Height, len(pic.RGB))
		}
		_, payload, _ := strings.Cut(url, ",")
		data, derr := base64.StdEncoding.DecodeString(payload)
		if derr != nil {
			data, derr = base64.RawStdEncoding.DecodeString(payload)
		}
		want := sha256.Sum256(data)
		if derr != nil || sum != hex.EncodeToString(want[:]) {
			t.Fatalf("image hash %s, the URL's bytes hash %x (%v)", sum, want, derr)
		}
	})
}

// FuzzToolCalls: a model's answer in tool mode (text the caller's
// messages steer) is read as tool calls without panicking; every call
// read names a declared tool and its arguments are JSON (or, in a
// cut answer, the arguments written so far).
func FuzzToolCalls(f *testing.F) {
	for _, s := range []string{
		`{"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris"}}]}`,
		`{"tool_calls":[{"name":"get_weather","arguments":{"city":"Par`,
		`{"tool_calls":[{"name":"get_weather","arguments":{}},{"name":"other","arguments":1}]}`,
		`{"tool_calls":[{"name":"get_weather"}]}`,
		`{"tool_calls":[]}`,
		`{"tool_calls":[{"name":"get_weather","arguments":{"a":[1,2,`,
		`  plain text`,
		`{`,
	} {
		f.Add(s)
	}
	m := &toolMode{choice: "auto", tools: []Tool{{Type: "function", Function: FunctionDef{Name: "get_weather"}}, {Type: "function", Function: FunctionDef{Name: "lookup-2"}}}}
	known := map[string]bool{"get_weather": true, "lookup-2": true}
	f.Fuzz(func(t *testing.T, text string) {
		calls, ok := m.parse(text)
		if ok != (len(calls) > 0) {
			t.Fatalf("ok %v with %d calls", ok, len(calls))
		}
		for _, c := range calls {
			if !known[c.Function.Name] || c.Type != "function" || c.ID == "" || !json.Valid([]byte(c.Function.Arguments)) {
				t.Fatalf("parsed call %+v", c)
			}
		}
		cut := m.cut(text)
		for i, c := range cut {
			if !known[c.Function.Name] || c.Type != "function" || c.ID == "" {
				t.Fatalf("cut call %+v", c)
			}
			if i < len(cut)-1 && !json.Valid([]byte(c.Function.Arguments)) {
				t.Fatalf("cut call %d of %d has arguments %q", i, len(cut), c.Function.Arguments)
			}
		}
	})
}
