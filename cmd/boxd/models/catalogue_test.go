package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"boxd/configs"
	"boxd/engine/models/catalogue"
	"boxd/engine/models/convert"
	"boxd/engine/models/testmodels"
)

// catalogueMirror is a loopback HTTP server serving files by name, with
// Range support, that can cut a transfer halfway once.
type catalogueMirror struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	cut   map[string]bool // cut this file's next full transfer halfway
	hits  []string        // "METHOD PATH RANGE"
}

func newCatalogueMirror(t *testing.T, files map[string][]byte) *catalogueMirror {
	m := &catalogueMirror{files: files, cut: map[string]bool{}}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := filepath.Base(r.URL.Path)
		m.mu.Lock()
		m.hits = append(m.hits, r.Method+" "+r.URL.Path+" "+r.Header.Get("Range"))
		blob, ok := m.files[name]
		cut := m.cut[name] && r.Header.Get("Range") == ""
		if cut {
			m.cut[name] = false
		}
		m.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if cut {
			w.Header().Set("Content-Length", strconv.Itoa(len(blob)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(blob[:len(blob)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection drops mid-file
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(blob))
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *catalogueMirror) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.hits...)
}

func hexSHA(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func writeCatalogue(t *testing.T, c catalogue.Catalogue) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "catalogue.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestModelsPullByNameFromMirror: boxd models pull NAME fetches every file
// of a catalogue entry (model and projector) from the mirror models.mirror
// names, not the publisher, resumes a transfer cut halfway, checks each
// SHA-256, refuses a file whose SHA-256 is not the catalogue's, keeps a
// file that is already there, and converts a whisper.cpp file to GGUF.
func TestModelsPullByNameFromMirror(t *testing.T) {
	chat, err := os.ReadFile(testmodels.Generated(t, testmodels.ChatFile))
	if err != nil {
		t.Fatal(err)
	}
	projector := bytes.Repeat([]byte("mmproj "), 50_000)
	embed, err := os.ReadFile(testmodels.Generated(t, testmodels.EmbedFile))
	if err != nil {
		t.Fatal(err)
	}
	mirror := newCatalogueMirror(t, map[string][]byte{"tiny-chat.gguf": chat, "tiny-mmproj.gguf": projector, "tiny-embed.gguf": embed})
	mirror.cut["tiny-chat.gguf"] = true
	// The publisher's URLs are unreachable: every byte must come from the mirror.
	publisher := "http://127.0.0.1:1/publisher/"
	cat := writeCatalogue(t, catalogue.Catalogue{
		{Name: "tiny-chat", Role: catalogue.Chat, Summary: "test chat", Licence: "MIT", Settings: map[string]string{catalogue.TemplateKey: "chatml"}, Files: []catalogue.File{
			{Kind: catalogue.KindModel, Name: "tiny-chat.gguf", URL: publisher + "tiny-chat.gguf", SHA256: hexSHA(chat), Size: int64(len(chat))},
			{Kind: catalogue.KindProjector, Name: "tiny-mmproj.gguf", URL: publisher + "mmproj-model-f16.gguf", SHA256: hexSHA(projector)},
		}},
		{Name: "bad-embed", Role: catalogue.Embedder, Summary: "wrong digest", Licence: "MIT", Files: []catalogue.File{
			{Kind: catalogue.KindModel, Name: "tiny-embed.gguf", URL: publisher + "tiny-embed.gguf", SHA256: strings.Repeat("ab", 32)},
		}},
	})
	state := filepath.Join(t.TempDir(), "state")
	cfg := writeConfig(t, "models:\n  mirror: "+mirror.URL+"/boxd-models\n")
	args := func(a ...string) []string {
		return append(append([]string{"models"}, a...), "--state-dir", state, "--config", cfg, "--catalogue", cat)
	}

	// The first attempt is cut halfway; the part stays.
	code, _, errOut := runCLI(t, args("pull", "tiny-chat")...)
	part := filepath.Join(state, "models", "tiny-chat.gguf.part")
	if st, err := os.Stat(part); code == 0 || !strings.Contains(errOut, "run the same command again to resume") || err != nil || st.Size() == 0 {
		t.Fatalf("cut pull: %d %s (part %v)", code, errOut, err)
	}
	code, out, errOut := runCLI(t, args("pull", "tiny-chat")...)
	if code != 0 {
		t.Fatalf("resumed pull: %d %s", code, errOut)
	}
	dir := filepath.Join(state, "models")
	for name, want := range map[string][]byte{"tiny-chat.gguf": chat, "tiny-mmproj.gguf": projector} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, want := range []string{"tiny-chat (chat, licence MIT)", "bytes resumed, sha256 checked", hexSHA(chat), "size not pinned; the sha256 is", "next: boxd models use chat tiny-chat --config " + cfg} {
		if !strings.Contains(out, want) {
			t.Errorf("pull output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "from "+mirror.URL+"/boxd-models/tiny-chat.gguf") || !strings.Contains(errOut, "pull: 100%") {
		t.Errorf("pull log: %s", errOut)
	}
	reqs := mirror.requests()
	var resumed bool
	for _, r := range reqs {
		if !strings.HasPrefix(r, "GET /boxd-models/") {
			t.Errorf("request off the mirror path: %s", r)
		}
		resumed = resumed || strings.HasPrefix(r, "GET /boxd-models/tiny-chat.gguf bytes=")
	}
	if !resumed {
		t.Errorf("no ranged request resumed the cut file: %q", reqs)
	}

	// Already there: checked (from the remembered hash), not fetched again.
	code, out, _ = runCLI(t, args("pull", "tiny-chat")...)
	if code != 0 || strings.Count(out, "already there, sha256 checked") != 2 || len(mirror.requests()) != len(reqs) {
		t.Errorf("second pull: %d %s (%d requests, was %d)", code, out, len(mirror.requests()), len(reqs))
	}
	// A file in the way whose bytes differ is not replaced without --force.
	if err := os.WriteFile(filepath.Join(dir, "tiny-mmproj.gguf"), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, args("pull", "tiny-chat")...)
	if code == 0 || !strings.Contains(errOut, "pass --force to replace it") {
		t.Errorf("pull over a different file: %d %s", code, errOut)
	}
	if code, _, errOut = runCLI(t, args("pull", "tiny-chat", "--force")...); code != 0 {
		t.Errorf("pull --force: %d %s", code, errOut)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "tiny-mmproj.gguf")); !bytes.Equal(got, projector) {
		t.Error("--force did not restore the projector")
	}

	// A SHA-256 mismatch is refused and nothing is installed.
	code, _, errOut = runCLI(t, args("pull", "bad-embed")...)
	if code == 0 || !strings.Contains(errOut, "sha256 mismatch") || !strings.Contains(errOut, "it must serve each file under its name") {
		t.Errorf("mismatch: %d %s", code, errOut)
	}
	for _, p := range []string{"tiny-embed.gguf", "tiny-embed.gguf.part"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s left behind after a mismatch", p)
		}
	}

	// --mirror overrides models.mirror; refusals name what to do.
	for _, c := range []struct {
		args []string
		want string
	}{
		{args("pull", "tiny-chatt"), `"tiny-chatt" is not a model in boxd's catalogue; did you mean tiny-chat?`},
		{args("pull", "tiny-chat", "/srv/models"), "takes no DEST or --sha256"},
		{args("pull", "tiny-chat", "--mirror", "mirror.lan"), "--mirror: \"mirror.lan\" is not a mirror base URL"},
		{args("pull", mirror.URL+"/boxd-models/tiny-chat.gguf", "--sha256", hexSHA(chat), "--mirror", mirror.URL), "--mirror applies to catalogue names"},
		{args("pull", "bad-embed", "--mirror", mirror.URL+"/elsewhere"), "from the mirror " + mirror.URL + "/elsewhere:"},
	} {
		if code, _, errOut := runCLI(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: %d %s, want %q", c.args, code, errOut, c.want)
		}
	}

	// A whisper.cpp file is converted to the GGUF boxd loads.
	t.Run("whisper", func(t *testing.T) {
		bin, _ := testmodels.WhisperFiles(t, testmodels.Whisper{Name: "boxd-catalogue-whisper", Seed: 13, Micro: true})
		blob, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		pub := newCatalogueMirror(t, map[string][]byte{"ggml-test.bin": blob})
		wcat := writeCatalogue(t, catalogue.Catalogue{{Name: "whisper-test", Role: catalogue.Speech, Summary: "s", Licence: "MIT", Files: []catalogue.File{
			{Kind: catalogue.KindModel, Name: "ggml-test.bin", URL: pub.URL + "/ggml-test.bin", SHA256: hexSHA(blob), Size: int64(len(blob)), Convert: catalogue.ConvertWhisper, Output: "whisper-test.gguf"}}}})
		empty := writeConfig(t, "")
		code, out, errOut := runCLI(t, "models", "pull", "whisper-test", "--state-dir", state, "--config", empty, "--catalogue", wcat)
		if code != 0 || !strings.Contains(out, "converted from") || !strings.Contains(errOut, "converting ggml-test.bin to whisper-test.gguf") {
			t.Fatalf("pull whisper: %d %s %s", code, out, errOut)
		}
		info, err := convert.Describe(filepath.Join(dir, "whisper-test.gguf"))
		if err != nil || info.Whisper == nil {
			t.Fatalf("converted file: %v %+v", err, info)
		}
		code, out, _ = runCLI(t, "models", "use", "speech", "whisper-test", "--state-dir", state, "--config", empty, "--catalogue", wcat)
		if code != 0 || !strings.Contains(out, filepath.Join(dir, "whisper-test.gguf")) {
			t.Errorf("use speech: %d %s", code, out)
		}
	})
}

// TestModelsUseWritesTheSetting: boxd models use refuses a model not
// pulled yet and a role the model is not for; after the pull it writes the
// chat model, its projector and template into the config file, changing
// only those lines, a later config load reads them, and boxd models list
// shows the entry present and configured.
func TestModelsUseWritesTheSetting(t *testing.T) {
	chat, err := os.ReadFile(testmodels.Generated(t, testmodels.ChatFile))
	if err != nil {
		t.Fatal(err)
	}
	projector := []byte("a projector")
	rerank := []byte("a reranker")
	pub := newCatalogueMirror(t, map[string][]byte{"c.gguf": chat, "p.gguf": projector, "r.gguf": rerank})
	cat := writeCatalogue(t, catalogue.Catalogue{
		{Name: "tiny-chat", Role: catalogue.Chat, Summary: "s", Licence: "MIT", Files: []catalogue.File{
			{Kind: catalogue.KindModel, Name: "c.gguf", URL: pub.URL + "/c.gguf", SHA256: hexSHA(chat)},
			{Kind: catalogue.KindProjector, Name: "p.gguf", URL: pub.URL + "/p.gguf", SHA256: hexSHA(projector)}}},
		{Name: "tiny-rerank", Role: catalogue.Reranker, Summary: "s", Licence: "Apache-2.0", Files: []catalogue.File{
			{Kind: catalogue.KindModel, Name: "r.gguf", URL: pub.URL + "/r.gguf", SHA256: hexSHA(rerank), Size: int64(len(rerank))}}},
	})
	state := filepath.Join(t.TempDir(), "state")
	cfgFile := writeConfig(t, string(configs.DefaultYAML))
	args := func(a ...string) []string {
		return append(append([]string{"models"}, a...), "--state-dir", state, "--config", cfgFile, "--catalogue", cat)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{args("use", "chat", "tiny-chat"), "tiny-chat is not pulled yet (missing in " + filepath.Join(state, "models") + "): run boxd models pull tiny-chat first"},
		{args("use", "reranker", "tiny-chat"), "tiny-chat is a chat model, not a reranker model: boxd models use chat tiny-chat"},
		{args("use", "tts", "tiny-chat"), `"tts" is not a model role`},
		{args("use", "chat", "gemma"), "is not a model in boxd's catalogue"},
	} {
		if code, _, errOut := runCLI(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: %d %s, want %q", c.args, code, errOut, c.want)
		}
	}
	if b, _ := os.ReadFile(cfgFile); !bytes.Equal(b, configs.DefaultYAML) {
		t.Fatal("a refused use changed the config file")
	}

	if code, _, errOut := runCLI(t, args("pull", "tiny-chat")...); code != 0 {
		t.Fatalf("pull: %s", errOut)
	}
	code, out, errOut := runCLI(t, args("use", "llm", "tiny-chat")...)
	if code != 0 || !strings.Contains(out, "written to "+cfgFile) {
		t.Fatalf("use: %d %s %s", code, out, errOut)
	}
	model, proj := filepath.Join(state, "models", "c.gguf"), filepath.Join(state, "models", "p.gguf")
	got, _ := os.ReadFile(cfgFile)
	before, after := strings.Split(string(configs.DefaultYAML), "\n"), strings.Split(string(got), "\n")
	if len(before) != len(after) {
		t.Fatalf("use changed the file's shape: %d lines -> %d", len(before), len(after))
	}
	var changed []string
	for i := range before {
		if before[i] != after[i] {
			changed = append(changed, strings.TrimSpace(after[i]))
		}
	}
	if strings.Join(changed, "|") != `path: "`+model+`"|projector: "`+proj+`"` {
		t.Errorf("changed lines: %q", changed)
	}
	c, err := configs.Load(fileFlags(t, cfgFile, state))
	if err != nil {
		t.Fatal(err)
	}
	if c.Models.LLM.Path != model || c.Models.LLM.Projector != proj || c.Models.LLM.Template != "auto" {
		t.Errorf("loaded %+v", c.Models.LLM)
	}

	// list: the entry is present and configured; the configured file names it.
	code, out, errOut = runCLI(t, args("list", "--json")...)
	if code != 0 {
		t.Fatalf("list: %s", errOut)
	}
	var listing modelsListing
	if err := json.Unmarshal([]byte(out), &listing); err != nil {
		t.Fatal(err)
	}
	if listing.Configured[0].Catalogue != "tiny-chat" || listing.Configured[1].Catalogue != "tiny-chat" || listing.ModelsDir != filepath.Join(state, "models") {
		t.Errorf("configured rows: %+v", listing.Configured[:2])
	}
	rows := map[string]catalogueRow{}
	for _, r := range listing.Catalogue {
		rows[r.Name] = r
	}
	if r := rows["tiny-chat"]; r.State != "present" || !r.Configured || len(r.Paths) != 2 {
		t.Errorf("tiny-chat row %+v", r)
	}
	if r := rows["tiny-rerank"]; r.State != "missing" || r.Configured {
		t.Errorf("tiny-rerank row %+v", r)
	}
	code, out, _ = runCLI(t, args("list")...)
	if code != 0 || !strings.Contains(out, "CONFIGURED ("+cfgFile+")") || !regexpLine(out, "tiny-chat", "present", "yes") || !regexpLine(out, "tiny-rerank", "missing", "-") {
		t.Errorf("list table:\n%s", out)
	}

	// A pulled file of the wrong size shows as damaged; a part as partial.
	if code, _, errOut := runCLI(t, args("pull", "tiny-rerank")...); code != 0 {
		t.Fatalf("pull reranker: %s", errOut)
	}
	r := filepath.Join(state, "models", "r.gguf")
	if err := os.WriteFile(r, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut = runCLI(t, args("use", "reranker", "tiny-rerank")...); code == 0 || !strings.Contains(errOut, "is not pulled yet (damaged") {
		t.Errorf("use damaged: %d %s", code, errOut)
	}
	if err := os.Rename(r, r+".part"); err != nil {
		t.Fatal(err)
	}
	if _, out, _ = runCLI(t, args("list")...); !regexpLine(out, "tiny-rerank", "partial (pull again to resume)") {
		t.Errorf("partial row:\n%s", out)
	}

	// A config file that does not exist yet is written new, and loads.
	fresh := filepath.Join(t.TempDir(), "fresh.yaml")
	code, _, errOut = runCLI(t, "models", "use", "chat", "tiny-chat", "--state-dir", state, "--config", fresh, "--catalogue", cat)
	if code != 0 {
		t.Fatalf("use into a new file: %s", errOut)
	}
	if c, err := configs.Load(fileFlags(t, fresh, state)); err != nil || c.Models.LLM.Path != model {
		t.Errorf("new file: %v %+v", err, c)
	}
	// A setting the environment overrides is written, with a warning.
	t.Setenv("BOXD_MODELS_LLM_PATH", model)
	code, _, errOut = runCLI(t, "models", "use", "chat", "tiny-chat", "--state-dir", state, "--config", fresh, "--catalogue", cat)
	if code != 0 || !strings.Contains(errOut, "BOXD_MODELS_LLM_PATH is set in this environment and overrides models.llm.path") {
		t.Errorf("use under an environment override: %d %s", code, errOut)
	}
}

func fileFlags(t *testing.T, file, state string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	configs.RegisterFileFlags(fs)
	if err := fs.Parse([]string{"--config", file, "--state-dir", state}); err != nil {
		t.Fatal(err)
	}
	return fs
}

// regexpLine reports whether some line of out holds every field in order.
func regexpLine(out string, fields ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		rest, ok := l, true
		for _, f := range fields {
			i := strings.Index(rest, f)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(f):]
		}
		if ok {
			return true
		}
	}
	return false
}
