package upload

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"boxd/internal/problem"
)

// fuzzBody is the small fields of a fuzzed upload body.
type fuzzBody struct {
	Name string         `json:"name"`
	N    *int           `json:"n"`
	Meta map[string]any `json:"meta"`
	List []segment      `json:"list"`
}

// FuzzRead: the streaming upload reader (every route with a file_b64,
// image_b64 or video_b64 field) never panics and agrees with
// encoding/json: a body it accepts is one JSON object whose upload
// fields are base64 strings (or null) that decode to exactly the files
// it wrote (size, SHA-256 and bytes, each under its limit), and whose
// other fields decode to the same values; a body it refuses gets a
// 400 or 413 problem and leaves no temporary file behind.
func FuzzRead(f *testing.F) {
	data := []byte("\x00\x01\x02hello, world\xff")
	for _, s := range []string{
		`{"name":"a","file_b64":"` + base64.StdEncoding.EncodeToString(data) + `","n":3}`,
		`{"file_b64":"` + base64.RawURLEncoding.EncodeToString(data) + `","img_b64":null,"meta":{"a":[1,2,{"b":null}]}}`,
		`{"img_b64":"` + strings.ReplaceAll(base64.StdEncoding.EncodeToString(data[:9]), "/", `\/`) + `","list":[{"start":1,"end":2,"text":"x"}]}`,
		`{"file_b64":"QUJD\r\nREVG\n","name":"\u00e9\ud83d\ude00"}`,
		`{"file_b64":"QUJD","file_b64":"QUJD"}`,
		`{"file_b64":"QU=JD"}`,
		`{"file_b64":"Q"}`,
		`{"file_b64":"\u0051UJD"}`,
		`{"file_b64":1}`,
		`{"Name":"a"}`,
		`{"meta":{"a":1,"a":2}}`,
		`{"name":"a"} {}`,
		`{"name":"a",}`,
		`[]`,
		``,
		`{"file_b64":"` + strings.Repeat("QUJD", 30) + `"}`,
		`{"name":"` + strings.Repeat("x", 300) + `"}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	opt := Options{Fields: []Field{{Name: "file_b64", Limit: 64}, {Name: "img_b64", Limit: 16}}, Dir: dir, SmallLimit: 256}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got fuzzBody
		up, err := Read(context.Background(), bytes.NewReader(body), opt, &got)
		if err != nil {
			if up != nil {
				t.Fatal("an upload with an error")
			}
			p, ok := problem.As(err)
			if !ok || (p.Kind != problem.Invalid && p.Kind != problem.TooLarge) || p.Message == "" {
				t.Fatalf("error %v (%T), want a 400 or 413 problem", err, err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("%d temporary files left after an error", len(ents))
			}
			return
		}
		defer func() {
			if err := up.Remove(); err != nil {
				t.Fatal(err)
			}
		}()
		if int64(len(body)) > opt.BodyLimit() {
			t.Fatalf("accepted %d bytes over the body limit %d", len(body), opt.BodyLimit())
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(body, &all); err != nil {
			t.Fatalf("accepted a body encoding/json refuses: %v", err)
		}
		for _, fl := range opt.Fields {
			raw, present := all[fl.Name]
			file := up.Files[fl.Name]
			delete(all, fl.Name)
			if !present || string(raw) == "null" {
				if file != nil {
					t.Fatalf("a file for %s, which was absent or null", fl.Name)
				}
				continue
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil || file == nil {
				t.Fatalf("%s = %s accepted without a file (%v)", fl.Name, raw, err)
			}
			want, err := decodeAny(s)
			if err != nil {
				t.Fatalf("%s = %q accepted but is not base64: %v", fl.Name, s, err)
			}
			content, err := os.ReadFile(file.Path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(want)
			if !bytes.Equal(content, want) || file.Size != int64(len(want)) || file.SHA256 != hex.EncodeToString(sum[:]) || file.Size > fl.Limit {
				t.Fatalf("%s: file of %d bytes (size %d, limit %d), base64 says %d bytes", fl.Name, len(content), file.Size, fl.Limit, len(want))
			}
		}
		for name := range up.Files {
			if name != "file_b64" && name != "img_b64" {
				t.Fatalf("a file for %q", name)
			}
		}
		rest, err := json.Marshal(all)
		if err != nil {
			t.Fatal(err)
		}
		var want fuzzBody
		dec := json.NewDecoder(bytes.NewReader(rest))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("accepted fields encoding/json refuses: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %+v, encoding/json gives %+v", got, want)
		}
	})
}

// decodeAny decodes base64 as Read documents it: either alphabet,
// padded or not, with line breaks.
func decodeAny(s string) ([]byte, error) {
	s = strings.NewReplacer("\n", "", "\r", "", "-", "+", "_", "/").Replace(s)
	if strings.HasSuffix(s, "=") {
		return base64.StdEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}
