package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeBox answers the routes `boxd demo record` uses, like the daemon: a
// replay that ends with done and no error event is recorded.
type fakeBox struct {
	mu       sync.Mutex
	replays  []map[string]any
	recorded map[string]int64
	failID   string // this script's replay ends with an error event
}

func (b *fakeBox) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /demo/session", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"token":"ds_test","expires_at":1,"budget":{"seconds_audio":300,"llm_tokens":20000}}`)
	})
	mux.HandleFunc("POST /demo/replay", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ds_test" && r.Header.Get("Authorization") != "Bearer dk_key" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"bad token"}`)
			return
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		b.mu.Lock()
		b.replays = append(b.replays, body)
		b.mu.Unlock()
		id := body["script_id"].(string)
		if id == "sales-renewal-security" {
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":"all 4 live sessions on this box are in use; retry in 30 seconds"}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"type\":\"ready\",\"at_ms\":0,\"vertical\":%q}\n\n", body["vertical"])
		fmt.Fprint(w, "data: {\"type\":\"transcript\",\"at_ms\":900,\"i\":0,\"t\":0.4,\"text\":\"Hello.\",\"final\":true}\n\n")
		if id == b.failID {
			fmt.Fprint(w, "data: {\"type\":\"error\",\"at_ms\":1000,\"message\":\"the note lane failed: boom\"}\n\n")
		}
		fmt.Fprint(w, "data: {\"type\":\"done\",\"at_ms\":1200,\"summary\":{\"note\":{},\"codes\":[]}}\n\n")
		if id != b.failID {
			b.mu.Lock()
			b.recorded[id] = time.Now().Unix()
			b.mu.Unlock()
		}
	})
	mux.HandleFunc("GET /demo/recordings", func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		defer b.mu.Unlock()
		list := []map[string]any{}
		for id, at := range b.recorded {
			list = append(list, map[string]any{"id": id, "recorded_at": at})
		}
		_ = json.NewEncoder(w).Encode(list)
	})
	return mux
}

func TestDemoRecord(t *testing.T) {
	box := &fakeBox{recorded: map[string]int64{}, failID: "clinical-diabetes-followup"}
	srv := httptest.NewServer(box.handler())
	defer srv.Close()

	code, out, errOut := runCLI(t, "demo", "record", "--url", srv.URL, "--speed", "2", "clinical-back-pain")
	if code != 0 || !strings.Contains(out, "clinical-back-pain") || !strings.Contains(out, "recorded: 3 events, done.summary has codes, note") {
		t.Fatalf("record: %d %s %s", code, out, errOut)
	}
	if r := box.replays[0]; r["vertical"] != "clinical" || r["script_id"] != "clinical-back-pain" || r["speed"] != 2.0 {
		t.Errorf("replay body %v", r)
	}

	code, out, errOut = runCLI(t, "demo", "record", "--url", srv.URL+"/", "--key", "dk_key", "clinical-diabetes-followup", "sales-renewal-security", "field-roof-inspection")
	if code != 1 || !strings.Contains(errOut, "2 of 3 scripts were not recorded") ||
		!strings.Contains(out, "clinical-diabetes-followup   failed: the replay finished with errors, so it was not recorded: the note lane failed: boom") ||
		!strings.Contains(out, "sales-renewal-security       failed: replay: 429 Too Many Requests: all 4 live sessions") ||
		!strings.Contains(out, "field-roof-inspection        recorded") {
		t.Errorf("record with failures: %d\n%s\n%s", code, out, errOut)
	}

	for _, args := range [][]string{
		{"demo", "record", "--url", srv.URL, "nope"},
		{"demo", "record", "--url", srv.URL, "--speed", "3"},
	} {
		if code, _, errOut := runCLI(t, args...); code != exitConfig {
			t.Errorf("%v: %d %s", args, code, errOut)
		}
	}
	srv.Close()
	if code, out, _ := runCLI(t, "demo", "record", "--url", srv.URL, "field-roof-inspection"); code != 1 || !strings.Contains(out, "is boxd running at") {
		t.Errorf("no daemon: %d %s", code, out)
	}
}

func TestDemoAudio(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("espeak-ng is missing")
		}
		t.Skip("espeak-ng is missing")
	}
	state := filepath.Join(t.TempDir(), "state")
	cfg := writeConfig(t, "")
	code, out, errOut := runCLI(t, "demo", "audio", "--config", cfg, "--state-dir", state, "translate-en-es-tour")
	if code != 0 || !strings.Contains(out, "translate-en-es-tour") || !strings.Contains(out, filepath.Join(state, "demo-audio")) {
		t.Fatalf("audio: %d %s %s", code, out, errOut)
	}
	for _, f := range []string{"translate-en-es-tour.pcm", "translate-en-es-tour.json"} {
		if _, err := os.Stat(filepath.Join(state, "demo-audio", f)); err != nil {
			t.Error(err)
		}
	}
	if code, _, errOut := runCLI(t, "demo", "audio", "--config", cfg, "--state-dir", state, "nope"); code != exitConfig || !strings.Contains(errOut, `no script "nope"`) {
		t.Errorf("unknown script: %d %s", code, errOut)
	}
}
