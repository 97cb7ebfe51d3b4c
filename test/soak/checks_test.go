package soak

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"boxd/engine/attest"
	"boxd/pipelines/live/scripts"
)

var sig128 = strings.Repeat("ab", 64)

// goodClinical is a complete, ordered clinical session.
func goodClinical() []Event {
	ev := func(typ string, at int, kv ...any) Event {
		e := Event{"type": typ, "at_ms": float64(at)}
		for i := 0; i < len(kv); i += 2 {
			e[kv[i].(string)] = kv[i+1]
		}
		return e
	}
	lane := func(id string, at int) Event {
		return ev("lane", at, "lane", id, "title", "T "+id, "body", "b", "latency_ms", 5.0)
	}
	receipt := func(at int) Event {
		return ev("receipt", at, "id", fmt.Sprintf("lane-%d", at), "model", ChatModel, "gateway_sig", sig128, "provider", "k1", "status", "attested", "key_id", nil)
	}
	budget := func(at int) Event { return ev("budget", at, "seconds_audio_left", 3599.0, "llm_tokens_left", 1000.0) }
	return []Event{
		ev("ready", 0, "vertical", "clinical", "receipts", "signed", "models", map[string]any{"asr": "w", "llm": ChatModel}),
		budget(0),
		ev("transcript", 100, "i", 0.0, "t", 0.4, "text", "Hello", "final", false),
		ev("transcript", 200, "i", 0.0, "t", 0.4, "text", "Hello there.", "final", true),
		ev("transcript", 250, "i", 1.0, "t", 1.4, "text", "Pain.", "final", true),
		receipt(300), budget(300), lane("note", 300),
		lane("codes", 310), lane("priorauth", 320), lane("visit_level", 330),
		lane("final_transcript", 400),
		receipt(500), lane("final_note", 500), lane("verifier", 500),
		ev("done", 600, "summary", map[string]any{"note": "n"}),
	}
}

func TestCheckLive(t *testing.T) {
	idx := func(evs []Event, typ, lane string) int {
		return slices.IndexFunc(evs, func(e Event) bool { return e.typ() == typ && (lane == "" || e.str("lane") == lane) })
	}
	cases := []struct {
		name   string
		vert   string
		edit   func([]Event) []Event
		code   int
		faults []string // each must appear in some fault; none: no fault
	}{
		{"complete and ordered", "clinical", nil, 1000, nil},
		{"closed 1011 after an error", "clinical", func(e []Event) []Event {
			return append(e[:5], Event{"type": "error", "at_ms": 260.0, "message": "speech recognition failed"})
		}, 1011, []string{"closed 1011", "last event is \"error\"", "after-stop lane final_transcript missing"}},
		{"no done", "clinical", func(e []Event) []Event { return e[:len(e)-1] }, 1000, []string{"last event is \"lane\""}},
		{"at_ms goes back", "clinical", func(e []Event) []Event { e[6]["at_ms"] = 150.0; return e }, 1000, []string{"before the previous"}},
		{"at_ms not whole", "clinical", func(e []Event) []Event { e[3]["at_ms"] = 200.5; return e }, 1000, []string{"has at_ms 200.5"}},
		{"sentence skipped", "clinical", func(e []Event) []Event { e[4]["i"] = 2.0; return e }, 1000, []string{"sentence 2 while 1 is in progress"}},
		{"sentence after its final", "clinical", func(e []Event) []Event { e[4]["i"] = 0.0; return e }, 1000, []string{"sentence 0 while 1 is in progress"}},
		{"transcript after the after-stop lanes", "clinical", func(e []Event) []Event {
			k := idx(e, "lane", "final_note")
			late := Event{"type": "transcript", "at_ms": 500.0, "i": 2.0, "t": 3.0, "text": "late", "final": true}
			return append(e[:k+1], append([]Event{late}, e[k+1:]...)...)
		}, 1000, []string{"after the after-stop lane"}},
		{"after-stop lane missing", "clinical", func(e []Event) []Event {
			k := idx(e, "lane", "verifier")
			return append(e[:k], e[k+1:]...)
		}, 1000, []string{"after-stop lane verifier missing"}},
		{"after-stop lane missing with its failure said", "clinical", func(e []Event) []Event {
			k := idx(e, "lane", "verifier")
			e[k] = Event{"type": "error", "at_ms": 500.0, "message": "the verifier lane failed: model answered no JSON"}
			return e
		}, 1000, nil},
		{"after-stop lanes out of order", "clinical", func(e []Event) []Event {
			a, b := idx(e, "lane", "final_note"), idx(e, "lane", "verifier")
			e[a], e[b] = e[b], e[a]
			return e
		}, 1000, []string{"after-stop lane verifier at event 13, before the lane run ahead of it"}},
		{"lane of another vertical", "clinical", func(e []Event) []Event { e[idx(e, "lane", "codes")]["lane"] = "crm"; return e }, 1000, []string{`lane "crm" is not a clinical lane`}},
		{"event after done", "clinical", func(e []Event) []Event {
			return append(e, Event{"type": "budget", "at_ms": 700.0, "seconds_audio_left": 1.0, "llm_tokens_left": 1.0})
		}, 1000, []string{"done at event", "last event is \"budget\""}},
		{"receipt with a key for a demo token", "clinical", func(e []Event) []Event { e[idx(e, "receipt", "")]["key_id"] = "k"; return e }, 1000, []string{"receipt event"}},
		{"ready for another vertical", "sales", nil, 1000, []string{"want ready for sales"}},
		{"budget not second", "clinical", func(e []Event) []Event { e[1], e[2] = e[2], e[1]; return e }, 1000, []string{"second event is \"transcript\""}},
		{"budget rises", "clinical", func(e []Event) []Event { e[6]["llm_tokens_left"] = 5000.0; return e }, 1000, []string{"rises"}},
		{"unknown type", "clinical", func(e []Event) []Event { e[5]["type"] = "pause"; return e }, 1000, []string{`has type "pause"`}},
		{"too few events", "clinical", func(e []Event) []Event { return e[:1] }, 1000, []string{"1 events"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := goodClinical()
			if tc.edit != nil {
				evs = tc.edit(evs)
			}
			got := CheckLive(tc.vert, evs, tc.code)
			if len(tc.faults) == 0 && len(got) > 0 {
				t.Fatalf("faults %q, want none", got)
			}
			if len(tc.faults) > 0 && len(got) == 0 {
				t.Fatalf("no fault, want %q", tc.faults)
			}
			for _, want := range tc.faults {
				if !slices.ContainsFunc(got, func(f string) bool { return strings.Contains(f, want) }) {
					t.Errorf("no fault with %q in %q", want, got)
				}
			}
		})
	}
}

// sse writes chunks as a chat stream body.
func sse(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n\n")
	}
	return b.String()
}

func chunk(id string, delta string, extra string) string {
	return `data: {"id":"` + id + `","object":"chat.completion.chunk","model":"model-27b","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]` + extra + `}`
}

func lastChunk(id, finish, receiptID, provider string) string {
	return `data: {"id":"` + id + `","object":"chat.completion.chunk","model":"model-27b","choices":[{"index":0,"delta":{},"finish_reason":"` + finish + `"}],` +
		`"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7},"receipt":{"id":"` + receiptID + `","model":"model-27b","gateway_sig":"` + sig128 + `","provider":"` + provider + `"}}`
}

func TestReadChatStream(t *testing.T) {
	const id = "chatcmpl-1"
	good := []string{chunk(id, `{"role":"assistant"}`, ""), ": keep-alive", chunk(id, `{"content":"Once"}`, ""), chunk(id, `{"content":" upon"}`, ""), lastChunk(id, "length", id, "k1"), "data: [DONE]"}
	edit := func(i int, s string) []string { c := slices.Clone(good); c[i] = s; return c }
	cases := []struct {
		name  string
		lines []string
		want  string // a fault containing it; "" none
	}{
		{"complete", good, ""},
		{"no receipt", append(slices.Clone(good[:4]), "data: [DONE]"), "without its receipt"},
		{"no [DONE]", good[:5], "without [DONE]"},
		{"data after [DONE]", append(slices.Clone(good), chunk(id, `{"content":"x"}`, "")), "after [DONE]"},
		{"chunk after the receipt", append(slices.Clone(good[:5]), chunk(id, `{"content":"x"}`, ""), "data: [DONE]"), "after the one that carried the receipt"},
		{"another id", edit(2, chunk("chatcmpl-2", `{"content":"Once"}`, "")), `id "chatcmpl-2"`},
		{"receipt of another completion", edit(4, lastChunk(id, "length", "chatcmpl-9", "k1")), "receipt"},
		{"receipt of another key", edit(4, lastChunk(id, "length", id, "k2")), "provider k1"},
		{"role not first", edit(0, chunk(id, `{"content":"x"}`, "")), "not the assistant role"},
		{"error chunk", edit(3, `data: {"error":{"message":"the model failed"}}`), "error chunk"},
		{"unknown finish", edit(4, lastChunk(id, "tool_calls", id, "k1")), `finish_reason "tool_calls"`},
		{"not SSE", edit(1, "event: x"), "not an SSE data line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, faults := ReadChatStream(strings.NewReader(sse(tc.lines...)), id, "k1")
			if tc.want == "" {
				if len(faults) > 0 {
					t.Fatalf("faults %q", faults)
				}
				if res.Text != "Once upon" || res.Completion != 2 || res.ReceiptSig != sig128 || res.Finish != "length" {
					t.Errorf("result %+v", res)
				}
				return
			}
			if !slices.ContainsFunc(faults, func(f string) bool { return strings.Contains(f, tc.want) }) {
				t.Errorf("no fault with %q in %q", tc.want, faults)
			}
		})
	}
}

// receiptServer serves one receipt signed by key, as GET /receipts/{id}
// and the key as GET /attest/signing-key; tamper edits the record first.
func receiptServer(t *testing.T, key *attest.Key, text string, tamper func(map[string]any)) (*httptest.Server, attest.SignedModelCall) {
	t.Helper()
	signed, err := attest.IssueModelCall(key, attest.ModelCall{ID: "chatcmpl-7", Model: ChatModel, WeightsRoot: strings.Repeat("0", 64),
		RequestHash: attest.HashText("q"), OutputHash: attest.HashText(text), Usage: attest.NewUsage(5, 2), Created: "1"})
	if err != nil {
		t.Fatal(err)
	}
	checks := attest.CheckModelCall(signed, key.PublicKey())
	rec := map[string]any{"id": signed.ID, "model": signed.Model, "output_hash": signed.OutputHash,
		"gateway": map[string]any{"pubkey": key.PublicKeyHex(), "sig": signed.Sig}, "proof": map[string]any{"verified": true},
		"checks": checks, "status": "attested", "usage": map[string]any{"completion_tokens": 2}, "receipt": signed, "key_id": nil}
	if tamper != nil {
		tamper(rec)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /attest/signing-key", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"scheme": "ed25519", "pubkey": key.PublicKeyHex(), "key_id": key.ID()})
	})
	mux.HandleFunc("GET /receipts/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != signed.ID {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(rec)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, signed
}

func TestVerifier(t *testing.T) {
	key := attest.NewKey(ed25519.NewKeyFromSeed(make([]byte, 32)))
	other := attest.NewKey(ed25519.NewKeyFromSeed([]byte(strings.Repeat("x", 32))))
	const text = "Once upon"
	cases := []struct {
		name   string
		signer *attest.Key // signs the receipt (the box publishes key)
		tamper func(map[string]any)
		expect func(*Expect)
		want   string
	}{
		{"served and verified", key, nil, nil, ""},
		{"not served", key, nil, func(e *Expect) { e.ID = "chatcmpl-8" }, "not served"},
		{"output is not the text received", key, nil, func(e *Expect) { s := "Once upon a"; e.Output = &s }, "output hash"},
		{"completion tokens differ", key, nil, func(e *Expect) { e.Completion = 3 }, "completion tokens 2"},
		{"signature differs from the stream's", key, nil, func(e *Expect) { e.Sig = sig128 }, "signature differs"},
		{"a field changed after signing", key, func(r map[string]any) {
			s := r["receipt"].(attest.SignedModelCall)
			s.Usage = attest.NewUsage(5, 3)
			r["receipt"] = s
		}, nil, "recomputed check commitment"},
		{"signed by another key", other, nil, nil, "recomputed check key_pinned"},
		{"the box says unverified", key, func(r map[string]any) { r["status"] = "unverified" }, nil, `status "unverified"`},
		{"a check the box reports fails", key, func(r map[string]any) {
			r["checks"] = []attest.Check{{Name: "signature", OK: false, Detail: "bad"}}
		}, nil, "the box's check signature fails"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, signed := receiptServer(t, tc.signer, text, tc.tamper)
			// The box publishes key whoever signed.
			pub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/attest/signing-key" {
					_ = json.NewEncoder(w).Encode(map[string]string{"scheme": "ed25519", "pubkey": key.PublicKeyHex(), "key_id": key.ID()})
					return
				}
				http.Redirect(w, r, srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			defer pub.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			v, err := NewVerifier(ctx, pub.URL, pub.Client())
			if err != nil {
				t.Fatal(err)
			}
			if v.KeyID() != key.ID() {
				t.Errorf("key id %s, want %s", v.KeyID(), key.ID())
			}
			out := text
			e := Expect{ID: signed.ID, Model: ChatModel, Sig: signed.Sig, Output: &out, Completion: 2}
			if tc.expect != nil {
				tc.expect(&e)
			}
			faults := v.Verify(ctx, e)
			if tc.want == "" {
				if len(faults) > 0 {
					t.Fatalf("faults %q", faults)
				}
				return
			}
			if !slices.ContainsFunc(faults, func(f string) bool { return strings.Contains(f, tc.want) }) {
				t.Errorf("no fault with %q in %q", tc.want, faults)
			}
		})
	}
}

func TestThirds(t *testing.T) {
	cases := []struct {
		xs          []float64
		first, last float64
	}{
		{nil, 0, 0},
		{[]float64{5}, 5, 5},
		{[]float64{1, 2}, 1, 2},
		{[]float64{1, 9, 2, 3, 4, 5, 6, 7, 8}, 2, 7}, // thirds {1,9,2} and {6,7,8}
		{[]float64{4, 1, 3, 2, 0, 0, 9, 8, 7, 6}, 3, 7},
		{[]float64{4, 1, 0, 0, 7, 6}, 2.5, 6.5},
	}
	for _, tc := range cases {
		if f, l := Thirds(tc.xs); f != tc.first || l != tc.last {
			t.Errorf("Thirds(%v) = %v, %v; want %v, %v", tc.xs, f, l, tc.first, tc.last)
		}
	}
}

func TestVerdicts(t *testing.T) {
	const mib = 1 << 20
	// series builds load samples at 0, 10, ... s from per-sample values.
	series := func(rss []float64, gor, fds []int) []Sample {
		var out []Sample
		for i := range rss {
			out = append(out, Sample{At: time.Duration(i) * 10 * time.Second, Phase: PhaseLoad, Probe: Probe{RSS: int64(rss[i] * mib), Goroutines: gor[i], FDs: fds[i]}})
		}
		return out
	}
	flat := func() []Sample {
		return series([]float64{100, 300, 300, 310, 295, 305, 300, 302, 298, 301},
			[]int{10, 90, 95, 92, 97, 90, 93, 96, 91, 94}, []int{10, 40, 41, 40, 42, 40, 40, 41, 40, 42})
	}
	idle := func(s []Sample, phase string, gor, fds int) []Sample {
		return append(s, Sample{Phase: phase, Probe: Probe{RSS: 100 * mib, Goroutines: gor, FDs: fds}})
	}
	// verdict is the named check's outcome: pass, fail or not judged.
	verdict := func(checks []Check, prefix string) string {
		for _, c := range checks {
			if !strings.HasPrefix(c.Name, prefix) {
				continue
			}
			switch {
			case c.OK:
				return "pass"
			case c.Evaluated || c.Required:
				return "fail"
			default:
				return "not judged"
			}
		}
		return "missing"
	}
	cases := []struct {
		name    string
		samples []Sample
		want    map[string]string
	}{
		{"steady after warm-up, primed", idle(idle(flat(), PhaseIdleBefore, 12, 16), PhaseIdleAfter, 12, 16),
			map[string]string{"RSS": "pass", "goroutines under": "pass", "open files under": "pass", "goroutines idle": "pass", "open files idle": "pass"}},
		{"RSS grows 10 %", idle(idle(series([]float64{100, 300, 300, 300, 310, 315, 320, 330, 330, 330}, make([]int, 10), make([]int, 10)), PhaseIdleBefore, 1, 1), PhaseIdleAfter, 1, 1),
			map[string]string{"RSS": "fail", "goroutines under": "pass"}},
		{"one goroutine per request", idle(idle(series(make10(300), []int{10, 60, 70, 80, 90, 100, 110, 120, 130, 140}, make([]int, 10)), PhaseIdleBefore, 1, 1), PhaseIdleAfter, 1, 1),
			map[string]string{"goroutines under": "fail", "RSS": "pass"}},
		{"descriptors pile up", idle(idle(series(make10(300), make([]int, 10), []int{10, 40, 42, 44, 46, 48, 50, 52, 54, 56}), PhaseIdleBefore, 1, 1), PhaseIdleAfter, 1, 1),
			map[string]string{"open files under": "fail", "goroutines under": "pass"}},
		{"a goroutine left idle", idle(idle(flat(), PhaseIdleBefore, 12, 16), PhaseIdleAfter, 13, 16),
			map[string]string{"goroutines idle": "fail", "open files idle": "pass"}},
		{"a descriptor left idle", idle(idle(flat(), PhaseIdleBefore, 12, 16), PhaseIdleAfter, 12, 17),
			map[string]string{"open files idle": "fail", "goroutines idle": "pass"}},
		{"no priming: goroutines against start-up, descriptors not judged", idle(append([]Sample{{Phase: PhaseStart, Probe: Probe{Goroutines: 13, FDs: 14}}}, flat()...), PhaseIdleAfter, 12, 25),
			map[string]string{"goroutines idle": "pass", "open files idle": "not judged"}},
		{"too few samples", flat()[:3], map[string]string{"RSS": "fail", "goroutines under": "fail", "goroutines idle": "fail"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checks := Verdicts(tc.samples, 20*time.Second, DefaultLimits)
			for name, want := range tc.want {
				if got := verdict(checks, name); got != want {
					t.Errorf("%s: %s, want %s\n%s", name, got, want, ChecksTable(checks))
				}
			}
		})
	}
}

func make10(v float64) []float64 {
	out := make([]float64, 10)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestClips(t *testing.T) {
	s := scripts.Script{ID: "x", Vertical: "sales"}
	const rate = 2 * scripts.SampleRate
	pcm := make([]byte, 20*rate) // 20 s
	lines := []scripts.LineTiming{{N: 1, Start: 0.4, End: 3}, {N: 2, Start: 3.7, End: 9}, {N: 3, Start: 9.7, End: 12}, {N: 4, Start: 12.7, End: 18.8}}
	for _, tc := range []struct {
		max   float64
		lines []int // lines per clip
	}{
		{0, []int{4}},
		{0.1, []int{1, 1, 1, 1}}, // a line longer than max is a clip of its own
		{9.5, []int{2, 1, 1}},    // 0..9.35, 9.35..12.35, 12.35..20
		{100, []int{4}},
	} {
		clips := Clips(s, pcm, lines, tc.max)
		var got []int
		covered := 0
		for i, c := range clips {
			got = append(got, c.Lines)
			if len(c.PCM)%2 != 0 {
				t.Errorf("max %g: clip %d has an odd length", tc.max, i)
			}
			covered += len(c.PCM)
			if c.ScriptEnds != (i == len(clips)-1) {
				t.Errorf("max %g: clip %d ScriptEnds %v", tc.max, i, c.ScriptEnds)
			}
			for _, l := range lines[c.FirstLine-1 : c.FirstLine-1+c.Lines] {
				if l.Start < c.From || l.End > c.To {
					t.Errorf("max %g: line %d (%g-%g) cut by clip %g-%g", tc.max, l.N, l.Start, l.End, c.From, c.To)
				}
			}
		}
		if !slices.Equal(got, tc.lines) {
			t.Errorf("max %g: lines per clip %v, want %v", tc.max, got, tc.lines)
		}
		if covered < len(pcm)-2*len(clips) || covered > len(pcm) {
			t.Errorf("max %g: clips cover %d of %d bytes", tc.max, covered, len(pcm))
		}
	}
}

func TestProbeParsing(t *testing.T) {
	if n, err := vmRSS("Name:\tboxd\nVmRSS:\t  734544 kB\nThreads:\t9\n"); err != nil || n != 734544*1024 {
		t.Errorf("vmRSS = %d, %v", n, err)
	}
	if _, err := vmRSS("Name:\tboxd\n"); err == nil {
		t.Error("no VmRSS: no error")
	}
	m := parseMetrics("# HELP go_goroutines x\n# TYPE go_goroutines gauge\ngo_goroutines 13\nboxd_http_requests_total{route=\"x\",code=\"200\"} 4\nprocess_open_fds 1.4e+01\n")
	if m["go_goroutines"] != 13 || m["process_open_fds"] != 14 || len(m) != 2 {
		t.Errorf("parseMetrics = %v", m)
	}
	d := FDDiff(map[string]int{"socket": 3, "/s/boxd.db": 1, "pipe": 2}, map[string]int{"socket": 3, "/s/boxd.db": 2, "anon_inode:[eventfd]": 1})
	if want := []string{"/s/boxd.db: 1 → 2", "anon_inode:[eventfd]: 0 → 1", "pipe: 2 → 0"}; !slices.Equal(d, want) {
		t.Errorf("FDDiff = %q, want %q", d, want)
	}
}
