package upload

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"boxd/internal/problem"
)

type segment struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
}

type draft struct {
	Title      string    `json:"title"`
	Count      int       `json:"count"`
	Stream     bool      `json:"stream"`
	Transcript []segment `json:"transcript"`
}

func video(limit int64) Options {
	return Options{Fields: []Field{{Name: "video_b64", Limit: limit}}}
}

// read runs Read with opt.Dir set to a fresh directory, which it returns.
func read(t *testing.T, body string, opt Options, dst any) (*Upload, string, error) {
	t.Helper()
	opt.Dir = t.TempDir()
	up, err := Read(context.Background(), strings.NewReader(body), opt, dst)
	return up, opt.Dir, err
}

func checkFile(t *testing.T, f *File, want []byte) {
	t.Helper()
	got, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(want)
	if !bytes.Equal(got, want) || f.Size != int64(len(want)) || f.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("file %s: %d bytes (size %d, sha %s), want %d bytes (sha %x)", f.Field, len(got), f.Size, f.SHA256, len(want), sum)
	}
	if st, err := os.Stat(f.Path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", st.Mode(), err)
	}
}

func checkEmpty(t *testing.T, dir string) {
	t.Helper()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("temp dir holds %d entries (%v), want none", len(ents), err)
	}
}

// lines breaks s every n characters with the JSON escape \r\n.
func lines(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + `\r\n`)
		s = s[n:]
	}
	return b.String() + s
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	escape := strings.NewReplacer("/", `\/`).Replace
	for _, size := range []int{0, 1, 2, 3, 4, 5, 1000, 200_001} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for name, enc := range map[string]string{
			"std":         base64.StdEncoding.EncodeToString(data),
			"raw std":     base64.RawStdEncoding.EncodeToString(data),
			"url":         base64.URLEncoding.EncodeToString(data),
			"raw url":     base64.RawURLEncoding.EncodeToString(data),
			"escaped /":   escape(base64.StdEncoding.EncodeToString(data)),
			"mime lines":  lines(base64.StdEncoding.EncodeToString(data), 76),
			"escaped \\n": escape(strings.ReplaceAll(lines(base64.StdEncoding.EncodeToString(data), 64), `\r`, "")),
		} {
			body := `{"title": "Kitchen \"tour\" \u00e9", "video_b64": "` + enc + `", "count": 42, "stream": true,
				"transcript": [{"start": 0, "end": 2.5e0, "text": "hi"}, {"start": 2.5, "end": -3, "text": "there"}]}`
			var d draft
			up, _, err := read(t, body, video(int64(max(size, 1))), &d)
			if err != nil {
				t.Fatalf("%d bytes, %s: %v", size, name, err)
			}
			checkFile(t, up.Files["video_b64"], data)
			want := draft{Title: `Kitchen "tour" é`, Count: 42, Stream: true, Transcript: []segment{{0, 2.5, "hi"}, {2.5, -3, "there"}}}
			if d.Title != want.Title || d.Count != want.Count || !d.Stream || len(d.Transcript) != 2 || d.Transcript[1] != want.Transcript[1] {
				t.Fatalf("decoded %+v, want %+v", d, want)
			}
			if err := up.Remove(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestReaders splits the body in various ways, with an escape across the
// 64 KiB read buffer's end, and checks the result does not change.
func TestReaders(t *testing.T) {
	enc := strings.Repeat("A", 65535) + "/" + strings.Repeat("QUJD", 3)
	want, _ := base64.StdEncoding.DecodeString(enc)
	body := `{"video_b64":"` + strings.ReplaceAll(enc, "/", `\/`) + `","title":"x"}`
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r }, "one byte": iotest.OneByteReader,
		"half": iotest.HalfReader, "data with EOF": iotest.DataErrReader,
	} {
		var d draft
		opt := video(1 << 20)
		opt.Dir = t.TempDir()
		up, err := Read(context.Background(), wrap(strings.NewReader(body)), opt, &d)
		if err != nil || d.Title != "x" {
			t.Fatalf("%s: %v, %+v", name, err, d)
		}
		checkFile(t, up.Files["video_b64"], want)
	}
}

// TestSmallFields checks keys with escapes and nesting beyond json's depth.
func TestSmallFields(t *testing.T) {
	var d draft
	if _, _, err := read(t, `{"ti\u0074le":"x", "video_b64":null}`, video(1), &d); err != nil || d.Title != "x" {
		t.Fatalf("%v, %+v", err, d)
	}
	if _, _, err := read(t, `{"ti\u0074le":"x","title":"y"}`, video(1), &d); err == nil || !strings.Contains(err.Error(), `duplicate field "title"`) {
		t.Fatalf("err %v", err)
	}
	deep := `{"transcript":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}"
	if _, _, err := read(t, deep, video(1), &d); !problem.Is(err, problem.Invalid) {
		t.Fatalf("err %v", err)
	}
	var m map[string]any // a map takes any field
	if _, _, err := read(t, `{"a":[1,{"b":null}],"video_b64":"QQ"}`, video(1), &m); err != nil || len(m) != 1 {
		t.Fatalf("%v, %v", err, m)
	}
}

func TestTwoFields(t *testing.T) {
	opt := Options{Fields: []Field{{"image_b64", 10}, {"file_b64", 10}}}
	up, dir, err := read(t, `{"image_b64":"aW1n","file_b64":"ZmlsZQ=="}`, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, up.Files["image_b64"], []byte("img"))
	checkFile(t, up.Files["file_b64"], []byte("file"))
	up.Remove()
	checkEmpty(t, dir)

	// An error in the second removes the first.
	_, dir, err = read(t, `{"image_b64":"aW1n","file_b64":"Zm!s"}`, opt, nil)
	if !problem.Is(err, problem.Invalid) {
		t.Fatalf("err %v", err)
	}
	checkEmpty(t, dir)
}

func TestNullIsAbsent(t *testing.T) {
	for _, body := range []string{`{"video_b64":null,"title":"x"}`, `{"title":"x"}`} {
		var d draft
		up, dir, err := read(t, body, video(10), &d)
		if err != nil || len(up.Files) != 0 || d.Title != "x" {
			t.Fatalf("%s: %v, files %v, %+v", body, err, up, d)
		}
		checkEmpty(t, dir)
	}
}

func TestRefusals(t *testing.T) {
	tiny := Options{Fields: []Field{{"video_b64", 3}}, SmallLimit: 32}
	over := strings.Repeat(" ", int(tiny.BodyLimit())-len(`{"title":"x"}`)+1)
	for _, tc := range []struct {
		name, body string
		kind       problem.Kind
		want       string
	}{
		{"empty", "  ", problem.Invalid, "empty body"},
		{"array", `[1]`, problem.Invalid, "must be a JSON object, not an array"},
		{"string", `"QUJD"`, problem.Invalid, "must be a JSON object, not a string"},
		{"garbage", `x`, problem.Invalid, "invalid character 'x'"},
		{"trailing", `{"title":"x"} {}`, problem.Invalid, "data after its JSON object"},
		{"trailing after upload", `{"video_b64":"QUJD"}x`, problem.Invalid, "data after its JSON object"},
		{"truncated object", `{"title":"x"`, problem.Invalid, "ends in the middle"},
		{"truncated after comma", `{"title":"x",`, problem.Invalid, "ends in the middle"},
		{"truncated string", `{"title":"x`, problem.Invalid, "ends in the middle"},
		{"truncated upload", `{"video_b64":"QUJD`, problem.Invalid, "ends in the middle"},
		{"truncated array", `{"transcript":[{"start":1}`, problem.Invalid, "ends in the middle"},
		{"duplicate", `{"title":"a","title":"b"}`, problem.Invalid, `duplicate field "title"`},
		{"duplicate upload", `{"video_b64":"QUJD","video_b64":null}`, problem.Invalid, `duplicate field "video_b64"`},
		{"upload number", `{"video_b64":12}`, problem.Invalid, "field video_b64 must be a string of base64, not a number"},
		{"upload object", `{"video_b64":{}}`, problem.Invalid, "field video_b64 must be a string of base64, not an object"},
		{"upload bool", `{"video_b64":true}`, problem.Invalid, "field video_b64 must be a string of base64, not a boolean"},
		{"upload bad null", `{"video_b64":nul}`, problem.Invalid, "not valid JSON"},
		{"bad character", `{"video_b64":"QU!D"}`, problem.Invalid, `video_b64 is not valid base64: "!" at byte 2 of its string`},
		{"space", `{"video_b64":"QU D"}`, problem.Invalid, `video_b64 is not valid base64: " " at byte 2`},
		{"escape u", `{"video_b64":"QU\u0041"}`, problem.Invalid, `video_b64 is not valid base64: the escape \u at byte 2`},
		{"escape quote", `{"video_b64":"Q\"JD"}`, problem.Invalid, `the escape \" at byte 1`},
		{"lone char", `{"video_b64":"QUJDR"}`, problem.Invalid, "video_b64 is not valid base64: the end"},
		{"early padding", `{"video_b64":"Q==="}`, problem.Invalid, `"=" at byte 1`},
		{"short padding", `{"video_b64":"QQ="}`, problem.Invalid, "the end"},
		{"data after padding", `{"video_b64":"QQ==QUJD"}`, problem.Invalid, `"Q" at byte 4`},
		{"unknown field", `{"x":1}`, problem.Invalid, `unknown field "x"; remove it`},
		{"wrong case", `{"Title":"x"}`, problem.Invalid, `key "Title" at the top level is spelled "title"`},
		{"wrong case upload", `{"Video_B64":"QUJD"}`, problem.Invalid, `key "Video_B64" at the top level is spelled "video_b64"`},
		{"nested duplicate", `{"transcript":[{"a":1,"a":2}]}`, problem.Invalid, `key "a" appears twice in transcript[0]`},
		{"nested wrong case", `{"transcript":[{"Text":"a"}]}`, problem.Invalid, `key "Text" in transcript[0] is spelled "text"`},
		{"wrong type", `{"title":5}`, problem.Invalid, "field title must be a string, not a number"},
		{"wrong nested type", `{"transcript":[{"text":true}]}`, problem.Invalid, "must be a string, not a boolean"},
		{"bad literal", `{"title":tru}`, problem.Invalid, "body is not valid JSON (at byte 12)"},
		{"bad number", `{"count":01}`, problem.Invalid, "body is not valid JSON (at byte 11)"},
		{"control in string", "{\"title\":\"a\x01\"}", problem.Invalid, "body is not valid JSON"},
		{"bad escape", `{"title":"\q"}`, problem.Invalid, "body is not valid JSON"},
		{"bad nesting", `{"transcript":[{"text":"a"]}`, problem.Invalid, "body is not valid JSON"},
		{"missing colon", `{"title" "x"}`, problem.Invalid, "after object key"},
		{"missing comma", `{"title":"x" "count":1}`, problem.Invalid, "after object key:value pair"},
		{"key not string", `{title:"x"}`, problem.Invalid, "object key string"},
		{"upload over limit", `{"video_b64":"QUJDRA=="}`, problem.TooLarge, "video_b64 decodes to more than 3 bytes, this route's limit"},
		{"small over limit", `{"title":"` + strings.Repeat("a", 40) + `"}`, problem.TooLarge, "the fields other than video_b64 take more than 32 bytes of JSON, this route's limit"},
		{"body over limit", `{"video_b64":"QUJD","title":"x"}` + over, problem.TooLarge, "body is larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d draft
			up, dir, err := read(t, tc.body, tiny, &d)
			if problem.KindOf(err) != tc.kind || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v (%v), want %v with %q", err, problem.KindOf(err), tc.kind, tc.want)
			}
			if up != nil {
				t.Fatal("an upload beside an error")
			}
			checkEmpty(t, dir)
		})
	}
}

// TestBodyLimit reads a body of exactly BodyLimit bytes, then one of one
// byte more.
func TestBodyLimit(t *testing.T) {
	opt := Options{Fields: []Field{{"video_b64", 3000}}, SmallLimit: 100}
	head := `{"video_b64":"` + base64.StdEncoding.EncodeToString(make([]byte, 3000)) + `","title":"x"}`
	body := head + strings.Repeat("\n", int(opt.BodyLimit())-len(head))
	up, _, err := read(t, body, opt, &draft{})
	if err != nil {
		t.Fatal(err)
	}
	up.Remove()
	_, dir, err := read(t, body+" ", opt, &draft{})
	if !problem.Is(err, problem.TooLarge) || !strings.Contains(err.Error(), "body is larger than") {
		t.Fatalf("err %v", err)
	}
	checkEmpty(t, dir)
}

// cancelReader cancels its context after its first read.
type cancelReader struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (c *cancelReader) Read(p []byte) (int, error) {
	defer c.cancel()
	return c.r.Read(p[:min(len(p), 100)])
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	body := `{"video_b64":"` + base64.StdEncoding.EncodeToString(make([]byte, 1000)) + `"}`
	opt := video(1000)
	opt.Dir = dir
	_, err := Read(ctx, &cancelReader{strings.NewReader(body), cancel}, opt, nil)
	if !problem.Is(err, problem.Invalid) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	checkEmpty(t, dir)
}

// genReader generates {"video_b64":"<base64 of n pseudo-random bytes>","title":"x"}
// on the fly, hashing the bytes it encodes.
type genReader struct {
	head, tail []byte
	left       int64
	rng        *rand.ChaCha8
	h          hash.Hash
	raw, enc   []byte
	pending    []byte
}

func newGen(n int64) *genReader {
	return &genReader{
		head: []byte(`{"video_b64":"`), tail: []byte(`","title":"x"}`), left: n,
		rng: rand.NewChaCha8([32]byte{7}), h: sha256.New(),
		raw: make([]byte, 48<<10), enc: make([]byte, 64<<10),
	}
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		switch {
		case g.head != nil:
			g.pending, g.head = g.head, nil
		case g.left > 0:
			chunk := g.raw[:min(int64(len(g.raw)), g.left)]
			g.rng.Read(chunk)
			g.h.Write(chunk)
			g.left -= int64(len(chunk))
			g.pending = g.enc[:base64.StdEncoding.EncodedLen(len(chunk))]
			base64.StdEncoding.Encode(g.pending, chunk)
		case g.tail != nil:
			g.pending, g.tail = g.tail, nil
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// heapPeak samples HeapInuse every 2 ms until stop is called, which
// returns the peak growth over the baseline taken after a GC.
func heapPeak() (stop func() uint64) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

const limit64 = 64 << 20

// Test64MiB reads a 64 MiB upload (an 85 MiB body, generated as it is
// read) and checks the heap stays small.
func Test64MiB(t *testing.T) {
	dir := t.TempDir()
	opt := Options{Fields: []Field{{"video_b64", limit64}}, Dir: dir}
	gen := newGen(limit64)
	var d draft
	start := time.Now()
	stop := heapPeak()
	up, err := Read(context.Background(), gen, opt, &d)
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	defer up.Remove()
	t.Logf("64 MiB upload read in %v; peak heap growth %.2f MB (%d bytes)", time.Since(start).Round(time.Millisecond), float64(peak)/1e6, peak)
	f := up.Files["video_b64"]
	if want := hex.EncodeToString(gen.h.Sum(nil)); f.Size != limit64 || f.SHA256 != want || d.Title != "x" {
		t.Fatalf("file %+v, title %q; want %d bytes, sha %s", f, d.Title, limit64, want)
	}
	st, err := os.Stat(f.Path)
	if err != nil || st.Size() != limit64 {
		t.Fatalf("stat: %v %v", st, err)
	}
	if peak >= 16<<20 {
		t.Fatalf("peak heap growth %d bytes, want under 16 MiB", peak)
	}
}

// Test64MiBOverLimit sends one byte more than the limit.
func Test64MiBOverLimit(t *testing.T) {
	dir := t.TempDir()
	opt := Options{Fields: []Field{{"video_b64", limit64}}, Dir: dir}
	up, err := Read(context.Background(), newGen(limit64+1), opt, &draft{})
	want := "video_b64 decodes to more than 67108864 bytes (64 MiB), this route's limit"
	if up != nil || !problem.Is(err, problem.TooLarge) || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
	checkEmpty(t, dir)
}

// TestMessagesInJSONWords: an upload body's wrong type is named by its
// JSON path in JSON's words, and a byte-order mark before it is named
// (the held-out check's D8, as web/body.go words them).
func TestMessagesInJSONWords(t *testing.T) {
	type inner struct {
		Name string `json:"name"`
	}
	type body struct {
		Items []inner `json:"items"`
	}
	for _, tc := range []struct{ body, want string }{
		{`{"video_b64": "", "items": [{"name": "a"}, {"name": 7}]}`, "field items[1].name must be a string, not a number"},
		{"\xEF\xBB\xBF{\"video_b64\": \"\"}", "the body starts with a UTF-8 byte-order mark (EF BB BF): send JSON without it"},
	} {
		var dst body
		_, err := Read(context.Background(), strings.NewReader(tc.body), video(1<<20), &dst)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Go ") {
			t.Errorf("%q: %v", tc.body, err)
		}
	}
}
