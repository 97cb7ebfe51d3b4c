package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/configs"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/gpu"
	"boxd/pipelines/chat"
	"boxd/pipelines/studio"
	"boxd/web"
)

// studioLog is a log sink the studio tests read back.
type studioLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *studioLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *studioLog) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.String() }

// studioServer runs the server (no chat model, unless withModel) with its
// log captured.
func studioServer(t *testing.T, clk *clock, withModel bool) (*testServer, *studioLog) {
	t.Helper()
	logs := &studioLog{}
	var now func() time.Time
	if clk != nil {
		now = clk.Now
	}
	var engine *llm.Engine
	if withModel {
		e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 2048, Parallel: 1, Threads: 1}, Arbiter: gpu.NewArbiter()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		engine = e
	}
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := launch(t, cfg, web.Probes{}, now, func(s *Box) {
		s.log = slog.New(slog.NewJSONHandler(logs, nil))
		if now != nil {
			s.now = now
		}
		if engine != nil {
			s.Chat = &chat.Service{Engine: engine, ModelID: s.cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: engine.Info().Name, Provider: s.deps.Key.ID(), Receipts: s.deps.Receipts}
		}
	})
	return ts, logs
}

func studioMedia(t *testing.T, ts *testServer) string {
	return filepath.Join(ts.cfg.StateDir, "studio", "media")
}

func studioWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortedKeys(m map[string]any) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func TestStudioGalleryListsOnlyExistingFiles(t *testing.T) {
	ts, _ := studioServer(t, nil, false)
	r := ts.do(t, call{method: "GET", path: "/studio/gallery"})
	if r.status != 200 || strings.TrimSpace(string(r.body)) != "[]" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("empty gallery: %d %q", r.status, r.body)
	}
	dir := studioMedia(t, ts)
	studioWrite(t, filepath.Join(dir, "kite.png"), "\x89PNG fake")
	studioWrite(t, filepath.Join(dir, "kite.json"), `{"kind":"image","title":"Kite","prompt":"a red kite","model":"img","file":"kite.png","seed":3,"notice":"AI-generated"}`)
	studioWrite(t, filepath.Join(dir, "gone.json"), `{"kind":"music","title":"Gone","prompt":"x","model":"m","file":"gone.mp3","seed":1}`)
	r = ts.do(t, call{method: "GET", path: "/studio/gallery"})
	var items []map[string]any
	if err := json.Unmarshal(r.body, &items); err != nil || r.status != 200 || len(items) != 1 {
		t.Fatalf("gallery: %d %s", r.status, r.body)
	}
	it := items[0]
	if sortedKeys(it) != "id,kind,model,notice,prompt,report_url,seed,title,url" || it["id"] != "kite" || it["url"] != "/studio/media/kite.png" ||
		it["report_url"] != "/studio/report?item=kite" || it["seed"] != 3.0 || it["kind"] != "image" {
		t.Errorf("item = %v", it)
	}
	// The listed URL serves the file.
	m := ts.do(t, call{method: "GET", path: it["url"].(string)})
	if m.status != 200 || string(m.body) != "\x89PNG fake" || m.header.Get("Content-Type") != "image/png" ||
		m.header.Get("X-Content-Type-Options") != "nosniff" || m.header.Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("media: %d %v %q", m.status, m.header, m.body)
	}
	if err := os.Remove(filepath.Join(dir, "kite.png")); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, call{method: "GET", path: "/studio/gallery"}); strings.TrimSpace(string(r.body)) != "[]" {
		t.Errorf("after the file went: %s", r.body)
	}
}

// rawGet sends path exactly as written (no client-side cleaning).
func rawGet(t *testing.T, ts *testServer, path string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestStudioMediaRefusesTraversalAndListings(t *testing.T) {
	ts, _ := studioServer(t, nil, false)
	dir := studioMedia(t, ts)
	studioWrite(t, filepath.Join(dir, "sub", "clip.mp4"), "MP4DATA")
	studioWrite(t, filepath.Join(dir, "tune.mp3"), "ID3DATA")
	studioWrite(t, filepath.Join(dir, "tune.json"), `{"kind":"music","title":"T","prompt":"SIDECAR","model":"m","file":"tune.mp3","seed":1}`)
	studioWrite(t, filepath.Join(ts.cfg.StateDir, "secret.png"), "SECRET")
	if err := os.Symlink(filepath.Join(ts.cfg.StateDir, "secret.png"), filepath.Join(dir, "link.png")); err != nil {
		t.Fatal(err)
	}
	for path, ct := range map[string]string{"/studio/media/sub/clip.mp4": "video/mp4", "/studio/media/tune.mp3": "audio/mpeg"} {
		r := ts.do(t, call{method: "GET", path: path})
		if r.status != 200 || r.header.Get("Content-Type") != ct {
			t.Errorf("%s: %d %q", path, r.status, r.header.Get("Content-Type"))
		}
	}
	// Ranges work (audio and video players ask for them).
	r := ts.do(t, call{method: "GET", path: "/studio/media/sub/clip.mp4", headers: map[string]string{"Range": "bytes=0-2"}})
	if r.status != 206 || string(r.body) != "MP4" {
		t.Errorf("range: %d %q", r.status, r.body)
	}
	// A precondition that does not hold: 412 that says what to do.
	r = ts.do(t, call{method: "GET", path: "/studio/media/sub/clip.mp4", headers: map[string]string{"If-Unmodified-Since": "Mon, 02 Jan 2006 15:04:05 GMT"}})
	if r.status != 412 || !strings.Contains(r.errMsg(t), "fetch it again without the condition") {
		t.Errorf("failed precondition: %d %s", r.status, r.body)
	}
	// A range outside the file: 416 with the API's error body.
	r = ts.do(t, call{method: "GET", path: "/studio/media/sub/clip.mp4", headers: map[string]string{"Range": "bytes=9000-9999"}})
	if r.status != 416 || !strings.Contains(r.errMsg(t), "outside the file") || !strings.HasPrefix(r.header.Get("Content-Range"), "bytes */") {
		t.Errorf("range outside the file: %d %v %s", r.status, r.header, r.body)
	}
	for _, p := range []string{
		"/studio/media/", "/studio/media/sub", "/studio/media/sub/", "/studio/media/tune.json", "/studio/media/link.png",
		"/studio/media/../secret.png", "/studio/media/..%2fsecret.png", "/studio/media/%2e%2e/secret.png", "/studio/media/sub/..%2f..%2fsecret.png",
		"/studio/media/.%2e/.%2e/secret.png", "/studio/media/missing.png", "/studio/media/%00.png",
	} {
		status, body := rawGet(t, ts, p)
		if status == 200 || strings.Contains(body, "SECRET") || strings.Contains(body, "SIDECAR") || strings.Contains(body, "clip.mp4") {
			t.Errorf("%s: %d %q", p, status, body)
		}
	}
	if r := ts.do(t, call{method: "GET", path: "/studio/media/missing.png"}); r.status != 404 || !strings.Contains(r.errMsg(t), "no studio media file") {
		t.Errorf("missing: %d %s", r.status, r.body)
	}
}

func TestStudioPolicyRoute(t *testing.T) {
	ts, _ := studioServer(t, nil, false)
	r := ts.do(t, call{method: "GET", path: "/studio/policy"})
	m := r.json(t)
	if r.status != 200 || sortedKeys(m) != "limits,policy_url,prompt_categories,render_worker,report_categories,text" || m["policy_url"] != "/studio/policy" || m["render_worker"] != false {
		t.Fatalf("policy: %d %s", r.status, r.body)
	}
	if txt, _ := m["text"].(string); !strings.Contains(txt, "fails closed") || !strings.Contains(txt, "in the style of <Name>") {
		t.Errorf("text = %q", txt)
	}
	cats := func(k string) []string {
		var out []string
		for _, c := range m[k].([]any) {
			out = append(out, c.(map[string]any)["category"].(string))
		}
		return out
	}
	if got := strings.Join(cats("prompt_categories"), ","); got != "voice_imitation,real_song,copyrighted_character,real_artist,infringing,unavailable" {
		t.Errorf("prompt categories %s", got)
	}
	if got := strings.Join(cats("report_categories"), ","); got != "copyright,voice_imitation,real_person,harmful,privacy,other" {
		t.Errorf("report categories %s", got)
	}
	lim := m["limits"].(map[string]any)
	if lim["jobs_per_token"] != 3.0 || lim["reports_per_address_per_hour"] != 5.0 || lim["video_seconds"] != 5.0 || lim["music_seconds"] != 60.0 {
		t.Errorf("limits %v", lim)
	}
}

func job(kind, prompt string, params map[string]any) map[string]any {
	b := map[string]any{"kind": kind, "prompt": prompt}
	if params != nil {
		b["params"] = params
	}
	return b
}

func TestStudioJobsAuthAndBadInput(t *testing.T) {
	ts, _ := studioServer(t, nil, false)
	tok := session(t, ts, "studio")
	ok := job("image", "a red kite over green hills", nil)
	if r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: ok}); r.status != 401 || !strings.Contains(r.errMsg(t), "missing token") {
		t.Errorf("no token: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: ok, token: "ds_nope"}); r.status != 401 {
		t.Errorf("bad token: %d %s", r.status, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: ok, token: session(t, ts, "code")}); r.status != 403 || !strings.Contains(r.errMsg(t), "needs a studio token") {
		t.Errorf("code token: %d %s", r.status, r.body)
	}
	cases := []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"empty", ``, 400, "empty body"},
		{"no kind", `{"prompt":"x"}`, 400, "kind is required"},
		{"bad kind", job("poem", "x", nil), 400, `kind "poem"`},
		{"no prompt", `{"kind":"image"}`, 400, "prompt is required"},
		{"prompt not a string", `{"kind":"image","prompt":5}`, 400, "field prompt must be a string"},
		{"unknown field", `{"kind":"image","prompt":"x","style":"y"}`, 400, `unknown field "style"`},
		{"unknown param", job("image", "x", map[string]any{"steps": 4}), 400, `unknown field "steps"`},
		{"seed not a number", job("image", "x", map[string]any{"seed": "7"}), 400, "field params.seed must be a whole number"},
		{"video too long", job("video", "waves", map[string]any{"seconds": 6}), 400, "video is up to 5 seconds"},
		{"music too long", job("music", "folk", map[string]any{"seconds": 61}), 400, "music is up to 60 seconds"},
		{"lyrics on image", job("image", "x", map[string]any{"lyrics": "la"}), 400, "music only"},
		{"aspect on video", job("video", "x", map[string]any{"aspect": "square"}), 400, "images only"},
		{"bad aspect", job("image", "x", map[string]any{"aspect": "wide"}), 400, "square, landscape, portrait"},
		{"long prompt", job("image", strings.Repeat("k", 2001), nil), 400, "the limit is 2000"},
		{"huge body", `{"kind":"image","prompt":"` + strings.Repeat("k", 40<<10) + `"}`, 413, "larger than 32768 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: c.body, token: tok})
			if r.status != c.status || !strings.Contains(r.errMsg(t), c.want) {
				t.Errorf("%d %s; want %d %q", r.status, r.body, c.status, c.want)
			}
		})
	}
	// None of these took one of the token's 3 jobs.
	for i := range 3 {
		if r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: ok, token: tok}); r.status != 202 {
			t.Fatalf("job %d: %d %s", i+1, r.status, r.body)
		}
	}
}

func TestStudioJobsPolicy422(t *testing.T) {
	ts, logs := studioServer(t, nil, false)
	tok := session(t, ts, "studio")
	cases := []struct {
		name string
		body any
		cat  string
	}{
		{"style of a named artist", job("image", "a harbour in the style of Ingrid Solberg", nil), "real_artist"},
		{"artist name", job("music", "a love song like Adele", nil), "real_artist"},
		{"voice of", job("music", "a ballad in the voice of my neighbour", nil), "voice_imitation"},
		{"sounds like", job("music", "a track that sounds like a radio star", nil), "voice_imitation"},
		{"cover of", job("music", "a cover of an old hymn", nil), "real_song"},
		{"lyrics from a song", job("music", "slow folk", map[string]any{"lyrics": "the lyrics of a famous ballad"}), "real_song"},
		{"character", job("video", "Pikachu surfing at dawn", nil), "copyrighted_character"},
		{"logo", job("image", "a bakery logo with wheat", nil), "infringing"},
		// The rules cannot clear these; the judge needs a chat model and
		// there is none: fail closed.
		{"name needs the judge", job("image", "a portrait of Marcus at sunset", nil), "unavailable"},
		{"lyrics need the judge", job("music", "slow folk", map[string]any{"lyrics": "walking home tonight"}), "unavailable"},
		{"quoted title needs the judge", job("music", `a song called "Blue Morning"`, nil), "unavailable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: c.body, token: tok})
			m := r.json(t)
			if r.status != 422 || sortedKeys(m) != "category,error,policy_url" || m["category"] != c.cat || m["policy_url"] != "/studio/policy" || m["error"] == "" {
				t.Errorf("%d %s; want 422 %s", r.status, r.body, c.cat)
			}
		})
	}
	// Refusals take none of the token's jobs.
	for i := range 3 {
		if r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite over green hills", nil), token: tok}); r.status != 202 {
			t.Fatalf("job %d: %d %s", i+1, r.status, r.body)
		}
	}
	if l := logs.String(); strings.Contains(l, "Ingrid") || strings.Contains(l, "red kite") || strings.Contains(l, "walking home") || !strings.Contains(l, "studio job refused") {
		t.Errorf("the log carries prompts or misses refusals:\n%s", l)
	}
}

// TestStudioJobsNetworkLimit: one client network holds at most 30 jobs
// whatever tokens it uses; the 31st gets 429 with the wait until the
// oldest is forgotten.
func TestStudioJobsNetworkLimit(t *testing.T) {
	ts, _ := studioServer(t, nil, false)
	for i := range studio.JobsPerNetwork {
		tok := session(t, ts, "studio")
		if i%studio.JobsPerToken != 0 {
			continue
		}
		for range studio.JobsPerToken {
			if r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite", nil), token: tok}); r.status != 202 {
				t.Fatalf("job from token %d: %d %s", i, r.status, r.body)
			}
		}
	}
	r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite", nil), token: session(t, ts, "studio")})
	ra, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 429 || !strings.Contains(r.errMsg(t), "this network holds 30 studio jobs") || ra < 86000 || ra > 86400 {
		t.Errorf("job 31 from one network: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
}

// TestStudioReportsStoreFull: with the most reports the box keeps, a
// report gets 503 until the operator removes some.
func TestStudioReportsStoreFull(t *testing.T) {
	ts, _ := studioServer(t, nil, false)
	r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite", nil), token: session(t, ts, "studio")})
	jobID := r.json(t)["job_id"].(string)
	dir := filepath.Join(ts.cfg.StateDir, "studio", "reports")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range studio.MaxStoredReports {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rp_%05d.json", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	report := map[string]any{"job": jobID, "category": "other"}
	if r := ts.do(t, call{method: "POST", path: "/studio/report", body: report}); r.status != 503 || !strings.Contains(r.errMsg(t), "operator must review them") {
		t.Errorf("report with the store full: %d %s", r.status, r.body)
	}
	if err := os.Remove(filepath.Join(dir, "rp_00000.json")); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, call{method: "POST", path: "/studio/report", body: report}); r.status != 201 {
		t.Errorf("report after the operator removed one: %d %s", r.status, r.body)
	}
}

func TestStudioJobsQueueLimitAndPaused(t *testing.T) {
	ts, _ := studioServer(t, nil, false)
	tok := session(t, ts, "studio")
	var ids []string
	for i := range 3 {
		r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("video", "waves on a quiet shore", map[string]any{"seconds": 5, "seed": 9}), token: tok})
		m := r.json(t)
		if r.status != 202 || sortedKeys(m) != "job_id,position,report_url,status" || m["status"] != "queued" || m["position"] != float64(i+1) ||
			m["report_url"] != "/studio/report?job="+m["job_id"].(string) || r.header.Get("Location") != "/studio/jobs/"+m["job_id"].(string) {
			t.Fatalf("job %d: %d %s", i+1, r.status, r.body)
		}
		ids = append(ids, m["job_id"].(string))
	}
	r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite", nil), token: tok})
	if r.status != 429 || !strings.Contains(r.errMsg(t), "submitted 3 jobs, the limit per token") {
		t.Errorf("4th job: %d %s", r.status, r.body)
	}
	// Another token is not limited by this one; its job queues behind.
	r = ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("music", "slow folk guitar", map[string]any{"seconds": 60, "engine": "alt-music"}), token: session(t, ts, "studio")})
	if r.status != 202 || r.json(t)["position"] != 4.0 {
		t.Errorf("other token: %d %s", r.status, r.body)
	}

	get := func(id string) map[string]any {
		r := ts.do(t, call{method: "GET", path: "/studio/jobs/" + id})
		if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("GET job: %d %s", r.status, r.body)
		}
		return r.json(t)
	}
	m := get(ids[1])
	if sortedKeys(m) != "job_id,note,paused,position,report_url,status" || m["status"] != "queued" || m["position"] != 2.0 || m["paused"] != false ||
		m["note"] != studio.NoWorkerNote || m["job_id"] != ids[1] {
		t.Errorf("job = %v", m)
	}
	// A live session holds a slot: jobs are paused until it ends.
	pr, d := ts.deps.Platform.Authenticate(context.Background(), session(t, ts, "clinical"), "clinical")
	if d != nil {
		t.Fatal(d)
	}
	release, d := pr.AcquireLive()
	if d != nil {
		t.Fatal(d)
	}
	if m := get(ids[0]); m["paused"] != true || m["status"] != "queued" {
		t.Errorf("during a live session: %v", m)
	}
	release()
	if m := get(ids[0]); m["paused"] != false {
		t.Errorf("after the live session: %v", m)
	}
	for _, p := range []string{"/studio/jobs/job_0000", "/studio/jobs/" + strings.Repeat("x", 300)} {
		if r := ts.do(t, call{method: "GET", path: p}); r.status != 404 || !strings.Contains(r.errMsg(t), "no studio job") {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
	if r := ts.do(t, call{method: "DELETE", path: "/studio/jobs/" + ids[0]}); r.status != 405 {
		t.Errorf("DELETE: %d", r.status)
	}
}

func TestStudioJobsKeyLimitIsPerKey(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := launch(t, cfg, web.Probes{}, nil, nil)
	key, _ := createKey(t, ts, map[string]any{"verticals": []string{"studio"}})
	for i := range 3 {
		if r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite", nil), token: key}); r.status != 202 {
			t.Fatalf("key job %d: %d %s", i+1, r.status, r.body)
		}
	}
	if r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite", nil), token: key}); r.status != 429 {
		t.Errorf("4th key job: %d %s", r.status, r.body)
	}
	other, _ := createKey(t, ts, map[string]any{"verticals": []string{"code"}})
	if r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite", nil), token: other}); r.status != 403 {
		t.Errorf("key without studio: %d %s", r.status, r.body)
	}
}

func TestStudioReports(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	clk := newClock(t0)
	ts, logs := studioServer(t, clk, false)
	tok := session(t, ts, "studio")
	r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite", nil), token: tok})
	jobID := r.json(t)["job_id"].(string)
	dir := studioMedia(t, ts)
	studioWrite(t, filepath.Join(dir, "kite.png"), "png")
	studioWrite(t, filepath.Join(dir, "kite.json"), `{"kind":"image","title":"Kite","prompt":"a red kite","model":"img","file":"kite.png","seed":3}`)
	studioWrite(t, filepath.Join(dir, "gone.json"), `{"kind":"image","title":"Gone","prompt":"x","model":"img","file":"gone.png","seed":3}`)

	// The form.
	for _, c := range []struct {
		query  string
		status int
		want   string
	}{
		{"", 400, "needs ?item="},
		{"?item=kite&job=" + jobID, 400, "not both"},
		{"?item=", 400, "needs ?item="},
		{"?item=gone", 404, `no studio item "gone"`},
		{"?item=nope", 404, `no studio item "nope"`},
		{"?job=job_nope", 404, `no studio job "job_nope"`},
		{"?job=job_1&job=job_2", 400, "once"},
		{"?job=" + strings.Repeat("j", 129), 400, "job must be an id of 1 to 128"},
		{"?item=a%2Fb", 400, "item must be an id"},
	} {
		if r := ts.do(t, call{method: "GET", path: "/studio/report" + c.query}); r.status != c.status || !strings.Contains(r.errMsg(t), c.want) {
			t.Errorf("form %q: %d %s", c.query, r.status, r.body)
		}
	}
	for field, id := range map[string]string{"item": "kite", "job": jobID} {
		r := ts.do(t, call{method: "GET", path: "/studio/report?" + field + "=" + id})
		m := r.json(t)
		if r.status != 200 || m["action"] != "/studio/report" || m["method"] != "POST" || m["target"].(map[string]any)[field] != id || len(m["fields"].([]any)) != 4 || len(m["categories"].([]any)) != 6 {
			t.Errorf("form %s: %d %s", field, r.status, r.body)
		}
	}

	// Bad input.
	for _, c := range []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"empty", ``, 400, "empty body"},
		{"neither", `{"category":"other"}`, 400, "item or job is required"},
		{"both", map[string]any{"item": "kite", "job": jobID, "category": "other"}, 400, "not both"},
		{"bad category", map[string]any{"item": "kite", "category": "real_artist"}, 400, "use one of copyright"},
		{"no category", map[string]any{"item": "kite"}, 400, "category is none"},
		{"unknown field", map[string]any{"item": "kite", "category": "other", "email": "x"}, 400, `unknown field "email"`},
		{"long details", map[string]any{"item": "kite", "category": "other", "details": strings.Repeat("d", 2001)}, 400, "details holds 2001"},
		{"long contact", map[string]any{"item": "kite", "category": "other", "contact": strings.Repeat("c", 201)}, 400, "contact holds 201"},
		{"huge body", `{"item":"kite","category":"other","details":"` + strings.Repeat("d", 40<<10) + `"}`, 400, "larger than"},
		{"unknown item", map[string]any{"item": "nope", "category": "other"}, 404, `no studio item "nope"`},
		{"missing file", map[string]any{"item": "gone", "category": "other"}, 404, `no studio item "gone"`},
		{"unknown job", map[string]any{"job": "job_nope", "category": "other"}, 404, `no studio job "job_nope"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(t, call{method: "POST", path: "/studio/report", body: c.body})
			if r.status != c.status || !strings.Contains(r.errMsg(t), c.want) {
				t.Errorf("%d %s; want %d %q", r.status, r.body, c.status, c.want)
			}
		})
	}

	// Five an hour per address; bad input above did not count.
	var firstID string
	for i := range 5 {
		body := map[string]any{"item": "kite", "category": "copyright", "details": "COPIES-A-POSTER", "contact": "me@example.org"}
		if i%2 == 1 {
			body = map[string]any{"job": jobID, "category": "voice_imitation"}
		}
		r := ts.do(t, call{method: "POST", path: "/studio/report", body: body})
		m := r.json(t)
		if r.status != 201 || sortedKeys(m) != "received,report_id" || m["received"] != float64(clk.Now().Unix()) {
			t.Fatalf("report %d: %d %s", i+1, r.status, r.body)
		}
		if i == 0 {
			firstID = m["report_id"].(string)
		}
		clk.Advance(6 * time.Minute)
	}
	r = ts.do(t, call{method: "POST", path: "/studio/report", body: map[string]any{"item": "kite", "category": "other"}})
	if r.status != 429 || r.header.Get("Retry-After") != "1800" || !strings.Contains(r.errMsg(t), "5 reports in the last hour") {
		t.Errorf("6th report: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/studio/report", body: map[string]any{"item": "kite", "category": "other"}, client: fromAddr("127.0.0.2")}); r.status != 201 {
		t.Errorf("another address: %d %s", r.status, r.body)
	}
	clk.Set(t0.Add(time.Hour + time.Second))
	if r := ts.do(t, call{method: "POST", path: "/studio/report", body: map[string]any{"item": "kite", "category": "other"}}); r.status != 201 {
		t.Errorf("after the window: %d %s", r.status, r.body)
	}

	// Stored on the box, 0600; the log has ids, never details or contact.
	raw, err := os.ReadFile(filepath.Join(ts.cfg.StateDir, "studio", "reports", firstID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	if err := json.Unmarshal(raw, &stored); err != nil || stored["details"] != "COPIES-A-POSTER" || stored["contact"] != "me@example.org" || stored["item"] != "kite" {
		t.Errorf("stored %s", raw)
	}
	if fi, _ := os.Stat(filepath.Join(ts.cfg.StateDir, "studio", "reports", firstID+".json")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if l := logs.String(); strings.Contains(l, "COPIES-A-POSTER") || strings.Contains(l, "me@example.org") || strings.Contains(l, "127.0.0.1\"") || !strings.Contains(l, firstID) {
		t.Errorf("the log carries report text or misses its id:\n%s", l)
	}
}

// TestStudioJudgeWithModel runs the model judge through the chat service
// on the tiny generated model: its answer, held to the schema's grammar,
// is one of the categories or none, and its call is receipted.
func TestStudioJudgeWithModel(t *testing.T) {
	ts, _ := studioServer(t, nil, true)
	tok := session(t, ts, "studio")
	r := ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a portrait of Marcus at sunset", nil), token: tok})
	rc := r.header.Get("x-service-receipt")
	if !strings.HasPrefix(rc, "chatcmpl-") {
		t.Fatalf("no judge receipt: %d %v %s", r.status, r.header, r.body)
	}
	switch r.status {
	case 202:
		if r.json(t)["status"] != "queued" {
			t.Errorf("%s", r.body)
		}
	case 422:
		if c := r.json(t)["category"]; c == "unavailable" || c == "" {
			t.Errorf("the judge ran; category %v", c)
		}
	default:
		t.Errorf("%d %s", r.status, r.body)
	}
	if got := ts.do(t, call{method: "GET", path: "/receipts/" + rc}); got.status != 200 {
		t.Errorf("receipt %s: %d", rc, got.status)
	}
	// A prompt the rules clear makes no model call.
	r = ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a red kite over green hills", nil), token: tok})
	if r.status != 202 || r.header.Get("x-service-receipt") != "" {
		t.Errorf("rules-cleared prompt: %d %v", r.status, r.header.Get("x-service-receipt"))
	}
	// With fewer tokens left than a judge answer needs: 402, no call (a
	// cut answer would be charged and refused as unavailable).
	poor, _ := createKey(t, ts, map[string]any{"verticals": []string{"studio"}, "daily_llm_tokens": 10})
	r = ts.do(t, call{method: "POST", path: "/studio/jobs", body: job("image", "a portrait of Marcus at sunset", nil), token: poor})
	if r.status != 402 || r.header.Get("x-service-receipt") != "" || !strings.Contains(r.errMsg(t), "token budget") {
		t.Errorf("judge with 10 tokens left: %d %v %s", r.status, r.header.Get("x-service-receipt"), r.body)
	}
}
