package daemon

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	demoroutes "boxd/web/routes/demo"

	"boxd/configs"
	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
	"boxd/pipelines/chat"
	"boxd/pipelines/live"
	"boxd/pipelines/live/scripts"
	"boxd/pipelines/live/verticals"
)

// TestReplayEveryScriptThroughThePipeline replays each of the eight demo
// scripts through the whole pipeline: espeak-ng audio, the real speech
// engine (micro random-weight Whisper and Silero VAD: its text is
// meaningless), the real verticals with their code tables, and the tiny
// chat model. Every lane of the script's vertical must have emitted and
// done must close the stream. Pacing is off (the audio is fed as fast as
// the pipeline takes it).
func TestReplayEveryScriptThroughThePipeline(t *testing.T) {
	dataDir := os.Getenv("BOXD_TEST_DATA")
	if dataDir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BOXD_TEST_DATA is not set (the Makefile sets it)")
		}
		t.Skip("BOXD_TEST_DATA is not set; run through make")
	}
	verticals, err := verticals.Build(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	engine := microSpeechEngine(t)
	e, err := llm.Open(context.Background(), llm.EngineOptions{Options: llm.Options{Path: testmodels.Generated(t, testmodels.ChatFile), ContextLength: 8192, Parallel: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)

	cfg := configs.Defaults()
	cfg.StateDir = t.TempDir()
	demoroutes.ReplaySleep = func(time.Duration) {}
	t.Cleanup(func() { demoroutes.ReplaySleep = nil }) // after the server has stopped
	ts := newTestBox(t, boxOptions{cfg: cfg,
		deps: func(deps *Deps) {
			deps.Transcribe = live.SpeechTranscriber(engine)
			deps.LiveModels = live.Models{ASR: "whisper-micro-test", LLM: cfg.Models.LLM.ID}
			deps.LiveVerticals = verticals
			deps.Chat = &chat.Service{Engine: e, ModelID: cfg.Models.LLM.ID, WeightsRoot: strings.Repeat("ab", 32), Upstream: e.Info().Name, Provider: deps.Key.ID(), Receipts: deps.Receipts}
		},
		// The unpaced audio takes seconds: with a long debounce each live
		// lane runs about once, at stop, which keeps the tiny model's
		// calls few.
		tweak: func(b *Box) { b.LiveDebounce = time.Minute }})

	// All eight scripts: about 160 s on an idle 2-core CPU.
	// BOXD_TEST_QUICK_SCRIPTS=1 replays one per vertical.
	quick := os.Getenv("BOXD_TEST_QUICK_SCRIPTS") == "1"
	seen := map[string]bool{}
	recorded := 0
	for _, sc := range scripts.All() {
		if quick && seen[sc.Vertical] {
			continue
		}
		seen[sc.Vertical] = true
		t.Run(sc.ID, func(t *testing.T) {
			began := time.Now()
			timings := seedAudio(t, cfg.StateDir, sc.ID)
			tok := session(t, ts, sc.Vertical)
			r := ts.do(t, call{method: "POST", path: "/demo/replay", token: tok, body: map[string]any{"vertical": sc.Vertical, "script_id": sc.ID, "speed": 2.0}})
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			evs := readEvents(t, r.body)
			if len(evs) < 2 || evs[0].m["type"] != "ready" || evs[len(evs)-1].m["type"] != "done" {
				t.Fatalf("first %v, last %v", evs[0].m["type"], evs[len(evs)-1].m["type"])
			}
			lanes := map[string]int{}
			finals, receipts := 0, 0
			clean := true // no error event
			for _, ev := range evs {
				switch ev.m["type"] {
				case "lane":
					lanes[ev.m["lane"].(string)]++
				case "transcript":
					if ev.m["final"] == true {
						finals++
					}
				case "receipt":
					receipts++
				case "error":
					msg, _ := ev.m["message"].(string)
					clean = false
					t.Logf("error event: %v", msg)
				}
			}
			v := verticals[sc.Vertical]
			for _, spec := range append(append([]*live.LaneSpec{}, v.Live...), v.Final...) {
				if lanes[spec.ID] == 0 {
					t.Errorf("lane %s never emitted (lanes: %v)", spec.ID, lanes)
				}
			}
			summary, _ := evs[len(evs)-1].m["summary"].(map[string]any)
			if len(summary) == 0 {
				t.Errorf("done has no summary")
			}
			if finals == 0 || receipts == 0 {
				t.Errorf("%d final transcripts, %d receipts", finals, receipts)
			}
			if v.Roles != nil {
				checkDiarizedReplay(t, v, timings, summary)
			}
			// A clean replay is kept as the script's recording.
			if got := ts.do(t, call{method: "GET", path: "/demo/recordings/" + sc.ID + "/events"}); clean && got.status != 200 {
				t.Errorf("a clean replay was not recorded: %d %s", got.status, got.body)
			} else if clean {
				recorded++
			}
			t.Logf("%s: %d events, %d finals, %d receipts, lanes %v, %s", sc.ID, len(evs), finals, receipts, lanes, time.Since(began).Round(time.Millisecond))
		})
	}
	// Lane failures of the random-weight model are only logged, but not
	// every replay may fail: the recording check must have run.
	if recorded == 0 {
		t.Error("no replay finished cleanly, so no recording was checked")
	}
}

// checkDiarizedReplay checks pass 2 of a clinical or sales replay:
// final_transcript diarized by boxd-classical-1 (no diarizer model is
// configured), lines numbered from 1 whose speakers agree with the
// script's voices (each line's speaker against the voice of the script
// line it overlaps most, under the best one-to-one naming: at least 90 %
// of lines), every speaker given one of the vertical's roles, summary.pass2
// diarized, pass2_timing's diarize_s and roles_s, and (clinical) the cited
// note citing only lines that exist.
func checkDiarizedReplay(t *testing.T, v *live.Vertical, timings []scripts.LineTiming, summary map[string]any) {
	t.Helper()
	ft, _ := summary["final_transcript"].(map[string]any)
	lines, _ := ft["lines"].([]any)
	if ft["model"] != "boxd-classical-1" || len(lines) == 0 {
		t.Fatalf("final_transcript: model %v, %d lines: %v (pass2 %v)", ft["model"], len(lines), ft, summary["pass2"])
	}
	roles, _ := ft["roles"].(map[string]any)
	// votes[speaker label][script voice] counts lines.
	votes := map[string]map[int]int{}
	for i, l := range lines {
		m := l.(map[string]any)
		if m["n"] != float64(i+1) {
			t.Errorf("line %d numbered %v", i+1, m["n"])
		}
		sp, _ := m["speaker"].(string)
		if sp == "" {
			t.Errorf("line %d has no speaker: %v", i+1, m)
			continue
		}
		if r, ok := roles[sp].(string); !ok || m["role"] != r || !slices.Contains(v.Roles.Names, r) {
			t.Errorf("line %d: speaker %s role %v, roles %v", i+1, sp, m["role"], roles)
		}
		start, _ := m["start"].(float64)
		end, ok := m["end"].(float64)
		if !ok {
			end = start + 1
		}
		best, bestO := -1, 0.0
		for _, lt := range timings {
			if o := min(end, lt.End) - max(start, lt.Start); o > bestO {
				best, bestO = lt.Speaker, o
			}
		}
		if best < 0 {
			continue // a line of no script line (noise the VAD took)
		}
		if votes[sp] == nil {
			votes[sp] = map[int]int{}
		}
		votes[sp][best]++
	}
	// The best one-to-one naming of labels to voices, greedily by votes
	// (two or three speakers).
	agree, total, used := 0, 0, map[int]bool{}
	type pair struct {
		sp    string
		voice int
		n     int
	}
	var pairs []pair
	for sp, vs := range votes {
		for voice, n := range vs {
			pairs = append(pairs, pair{sp, voice, n})
			total += n
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int { return b.n - a.n })
	named := map[string]bool{}
	for _, p := range pairs {
		if !named[p.sp] && !used[p.voice] {
			named[p.sp], used[p.voice] = true, true
			agree += p.n
		}
	}
	sides := map[any]bool{}
	for _, r := range roles {
		sides[r] = true
	}
	if len(roles) >= 2 && (!sides[v.Roles.Asker] || !sides[v.Roles.Answerer]) {
		t.Errorf("roles %v: want both %s and %s", roles, v.Roles.Asker, v.Roles.Answerer)
	}
	if total == 0 || float64(agree) < 0.9*float64(total) {
		t.Errorf("speakers agree with the script's voices on %d of %d lines (votes %v)", agree, total, votes)
	}
	t.Logf("diarized: %d lines, speakers agree with the script's voices on %d of %d, roles %v (%v)", len(lines), agree, total, roles, ft["roles_source"])
	if p2, _ := summary["pass2"].(map[string]any); p2["diarized"] != true {
		t.Errorf("summary.pass2 %v", p2)
	}
	tm, _ := summary["pass2_timing"].(map[string]any)
	if _, ok := tm["diarize_s"].(float64); !ok {
		t.Errorf("pass2_timing %v", tm)
	}
	if _, ok := tm["roles_s"].(float64); !ok {
		t.Errorf("pass2_timing %v", tm)
	}
	if fn, ok := summary["final_note"].(map[string]any); ok {
		claims, _ := fn["claims"].([]any)
		for _, c := range claims {
			for _, n := range c.(map[string]any)["cites"].([]any) {
				if k := int(n.(float64)); k < 1 || k > len(lines) {
					t.Logf("claim %v cites line %d of %d (the random model may cite what is not there; the claim check marks it)", c, k, len(lines))
				}
			}
		}
	}
}
