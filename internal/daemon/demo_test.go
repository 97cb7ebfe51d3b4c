package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"boxd/configs"
	"boxd/pipelines/live/scripts"
)

func TestDemoScripts(t *testing.T) {
	env := demoServer(t, nil)
	r := env.do(t, call{method: "GET", path: "/demo/scripts"})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var list []map[string]any
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 8 {
		t.Fatalf("%d scripts", len(list))
	}
	ids := []string{}
	for _, s := range list {
		var keys []string
		for k := range s {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !reflect.DeepEqual(keys, []string{"duration_s", "has_audio", "id", "lang", "target", "title", "vertical"}) {
			t.Errorf("fields %v", keys)
		}
		ids = append(ids, s["id"].(string))
		d := s["duration_s"].(float64)
		if d < 60 || d > 130 || !strings.HasPrefix(s["id"].(string), s["vertical"].(string)+"-") {
			t.Errorf("script %v", s)
		}
		if s["vertical"] == "translate" {
			if s["target"] == nil || s["lang"] == s["target"] {
				t.Errorf("translate script %v", s)
			}
		} else if s["target"] != nil || s["lang"] != "en" {
			t.Errorf("script %v", s)
		}
	}
	if !reflect.DeepEqual(ids, scripts.IDs()) {
		t.Errorf("ids %v", ids)
	}
	if list[6]["lang"] != "es" || list[6]["target"] != "en" || list[7]["lang"] != "en" || list[7]["target"] != "es" {
		t.Errorf("translate scripts %v %v", list[6], list[7])
	}

	// Once the audio is cached the duration is the audio's.
	lines := seedAudio(t, env.state, "field-roof-inspection")
	r = env.do(t, call{method: "GET", path: "/demo/scripts"})
	_ = json.Unmarshal(r.body, &list)
	want := lines[len(lines)-1].End + 1.2 // the tail silence
	if got := list[4]["duration_s"].(float64); got < want-0.1 || got > want+0.1 || list[4]["has_audio"] != true {
		t.Errorf("cached script %v, want %.1f s", list[4], want)
	}

	// Without espeak-ng only cached scripts have audio.
	t.Setenv("PATH", t.TempDir())
	r = env.do(t, call{method: "GET", path: "/demo/scripts"})
	_ = json.Unmarshal(r.body, &list)
	for i, s := range list {
		if s["has_audio"] != (i == 4) {
			t.Errorf("without espeak-ng: %v", s)
		}
	}
}

// TestRecordingsComeFromReplays: recordings exist only once a replay ran
// cleanly through the pipeline, hold exactly its events (key ids left
// out), and are not replaced by a replay that failed.
func TestRecordingsComeFromReplays(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	env := demoServer(t, cfg)
	r := env.do(t, call{method: "GET", path: "/demo/recordings"})
	if r.status != 200 || strings.TrimSpace(string(r.body)) != "[]" {
		t.Fatalf("before any replay: %d %s", r.status, r.body)
	}
	for path, want := range map[string]string{
		"/demo/recordings/sales-renewal-security/events": "no recording",
		"/demo/recordings/nope/events":                   "no script",
	} {
		if r := env.do(t, call{method: "GET", path: path}); r.status != 404 || !strings.Contains(r.errMsg(t), want) {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}

	id := "sales-renewal-security"
	lines := env.prepare(t, id)
	key, _ := createKey(t, env.testServer, map[string]any{"label": "demo"})
	rep := env.replay(t, key, map[string]any{"vertical": "sales", "script_id": id, "speed": 1.5})
	if rep.status != 200 {
		t.Fatalf("replay: %d %s", rep.status, rep.body)
	}
	streamed := readEvents(t, rep.body)

	r = env.do(t, call{method: "GET", path: "/demo/recordings"})
	var list []map[string]any
	if err := json.Unmarshal(r.body, &list); err != nil || len(list) != 1 {
		t.Fatalf("recordings: %s", r.body)
	}
	item := list[0]
	sc, _ := scripts.Lookup(id)
	audioS := lines[len(lines)-1].End + 1.2
	if item["id"] != id || item["vertical"] != "sales" || item["title"] != sc.Title || item["events_url"] != "/demo/recordings/"+id+"/events" ||
		item["speed"] != 1.5 || item["recorded_at"] != float64(env.clk.Now().Unix()) {
		t.Errorf("item %v", item)
	}
	if d := item["duration_s"].(float64); d < audioS-0.1 || d > audioS+0.1 {
		t.Errorf("duration_s %v, want %.1f", d, audioS)
	}

	r = env.do(t, call{method: "GET", path: item["events_url"].(string)})
	var recorded []map[string]any
	if err := json.Unmarshal(r.body, &recorded); err != nil || r.status != 200 {
		t.Fatalf("events: %d %s", r.status, r.body)
	}
	if len(recorded) != len(streamed) {
		t.Fatalf("%d recorded events, %d streamed", len(recorded), len(streamed))
	}
	budgets := 0
	for i, e := range recorded {
		s := streamed[i].m
		if e["type"] == "budget" {
			budgets++
			if s["key_id"] == nil || e["key_id"] != nil || e["period"] != nil {
				t.Errorf("budget event: streamed %v, recorded %v", s, e)
			}
			delete(s, "key_id")
			delete(s, "period")
		}
		if _, ok := e["at_ms"].(float64); !ok || !reflect.DeepEqual(e, s) {
			t.Errorf("event %d: recorded %v, streamed %v", i, e, s)
		}
	}
	if budgets == 0 || recorded[0]["type"] != "ready" || recorded[len(recorded)-1]["type"] != "done" {
		t.Errorf("recorded %d budget events, first %v, last %v", budgets, recorded[0]["type"], recorded[len(recorded)-1]["type"])
	}

	// A replay that ends early (the demo token's audio budget runs out)
	// keeps the earlier recording.
	before, _ := os.ReadFile(filepath.Join(env.state, "recordings", id+".json"))
	tok := session(t, env.testServer, "sales")
	pr, _ := env.deps.Platform.Authenticate(t.Context(), tok, "sales")
	left, _ := pr.AudioLeftMS(t.Context())
	if _, err := pr.ChargeAudio(t.Context(), left-20_000); err != nil { // 20 s left
		t.Fatal(err)
	}
	rep = env.replay(t, tok, map[string]any{"vertical": "sales", "script_id": id, "speed": 2})
	if evs := readEvents(t, rep.body); evs[len(evs)-1].m["type"] != "error" {
		t.Fatalf("short replay ended with %v", evs[len(evs)-1].m)
	}
	after, _ := os.ReadFile(filepath.Join(env.state, "recordings", id+".json"))
	if string(before) != string(after) {
		t.Error("a failed replay replaced the recording")
	}
	if left, _ := filepath.Glob(filepath.Join(env.state, "recordings", ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
