package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"boxd/pipelines/live/scripts"
)

// Lanes are a live vertical's lane ids (contract document 1, section 6):
// Live while people talk, Final after stop, in the order they run.
type Lanes struct {
	Live, Final []string
}

// VerticalLanes is the contract's lane table. Translate's glossary is
// rebuilt once more at stop.
var VerticalLanes = map[string]Lanes{
	"clinical":  {Live: []string{"note", "codes", "priorauth", "visit_level"}, Final: []string{"final_transcript", "final_note", "verifier"}},
	"sales":     {Live: []string{"objection", "next_question", "crm"}, Final: []string{"followup", "final_transcript"}},
	"field":     {Live: []string{"checklist", "issues", "measurements", "passed_checks"}, Final: []string{"safety_sweep", "report_check", "report"}},
	"translate": {Live: []string{"translation", "glossary"}, Final: []string{"glossary", "summary"}},
}

// Event is one server event of a live socket, as JSON.
type Event map[string]any

func (e Event) typ() string { s, _ := e["type"].(string); return s }

func (e Event) str(k string) string { s, _ := e[k].(string); return s }

func (e Event) num(k string) (float64, bool) { f, ok := e[k].(float64); return f, ok }

// closeNormal is the close code of a session that ended with done.
const closeNormal = 1000

// CheckLive checks one live session's events and close code against the
// contract (document 1, sections 2, 6 and 7) and returns every fault (none:
// the sequence is complete and ordered):
//
//   - ready first (the vertical, the models, receipts signed), then a
//     budget event; done last (with a summary object), once, and the
//     socket closed 1000 after it;
//   - every event has a known type and an integer at_ms, never smaller
//     than the one before (the session's clock, in send order);
//   - transcript sentences in order: sentence i's updates until its one
//     final, then i+1;
//   - lanes only of the vertical; every after-stop lane after the last
//     transcript, in the order they run, unless an error event after the
//     last transcript says that lane (or pass 2) failed; no transcript
//     after the first after-stop-only lane;
//   - receipts signed ("attested", a 128-hex signature, no key for a demo
//     token); budget events with both figures, never rising within the
//     session; error events with a message.
func CheckLive(vertical string, evs []Event, code int) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	lanes, ok := VerticalLanes[vertical]
	if !ok {
		return []string{fmt.Sprintf("unknown vertical %q", vertical)}
	}
	if code != closeNormal {
		last := ""
		if len(evs) > 0 {
			last = fmt.Sprintf("%v", evs[len(evs)-1])
		}
		fail("closed %d, not 1000 after done (last event %s)", code, clipStr(last))
	}
	if len(evs) < 3 {
		return append(bad, fmt.Sprintf("%d events: ready, budget and done at least", len(evs)))
	}
	if r := evs[0]; r.typ() != "ready" || r.str("vertical") != vertical || r.str("receipts") != "signed" {
		fail("first event %v, want ready for %s with receipts signed", clipStr(fmt.Sprint(r)), vertical)
	} else if m, _ := r["models"].(map[string]any); m == nil || m["asr"] == "" || m["llm"] != ChatModel {
		fail("ready models %v", r["models"])
	}
	if evs[1].typ() != "budget" {
		fail("second event is %q, want budget", evs[1].typ())
	}
	if d := evs[len(evs)-1]; d.typ() != "done" {
		fail("last event is %q, want done", d.typ())
	} else if _, ok := d["summary"].(map[string]any); !ok {
		fail("done has no summary object")
	}
	finalOnly := map[string]bool{}
	for _, id := range lanes.Final {
		finalOnly[id] = !slices.Contains(lanes.Live, id)
	}
	known := map[string]bool{}
	for _, id := range append(slices.Clone(lanes.Live), lanes.Final...) {
		known[id] = true
	}
	var lastAt, lastAudio, lastTokens float64
	next, lastTranscript, firstFinalOnly, budgets := 0, -1, -1, 0
	for k, e := range evs {
		at, ok := e.num("at_ms")
		if !ok || at < 0 || at != math.Trunc(at) {
			fail("event %d (%s) has at_ms %v", k, e.typ(), e["at_ms"])
		} else if at < lastAt {
			fail("event %d (%s) at_ms %v before the previous %v", k, e.typ(), at, lastAt)
		} else {
			lastAt = at
		}
		switch e.typ() {
		case "ready":
			if k != 0 {
				fail("ready again at event %d", k)
			}
		case "done":
			if k != len(evs)-1 {
				fail("done at event %d of %d", k, len(evs))
			}
		case "budget":
			audio, a := e.num("seconds_audio_left")
			tokens, t := e.num("llm_tokens_left")
			switch {
			case !a || !t:
				fail("budget event %d: %v", k, e)
			case budgets > 0 && (audio > lastAudio || tokens > lastTokens):
				fail("budget event %d rises: %v s and %v tokens left after %v and %v", k, audio, tokens, lastAudio, lastTokens)
			}
			budgets++
			lastAudio, lastTokens = audio, tokens
		case "transcript":
			lastTranscript = k
			if firstFinalOnly >= 0 {
				fail("transcript at event %d after the after-stop lane at %d", k, firstFinalOnly)
			}
			i, _ := e.num("i")
			if int(i) != next || i != math.Trunc(i) {
				fail("transcript event %d is sentence %v while %d is in progress", k, e["i"], next)
			}
			if _, ok := e["text"].(string); !ok {
				fail("transcript event %d has no text", k)
			}
			if t, ok := e.num("t"); !ok || t < 0 {
				fail("transcript event %d has t %v", k, e["t"])
			}
			switch e["final"] {
			case true:
				next++
			case false:
			default:
				fail("transcript event %d: final is %v", k, e["final"])
			}
		case "lane":
			id := e.str("lane")
			if !known[id] {
				fail("lane %q is not a %s lane", id, vertical)
			}
			if e.str("title") == "" {
				fail("lane %s at event %d has no title", id, k)
			}
			if _, ok := e.num("latency_ms"); !ok {
				fail("lane %s at event %d has no latency_ms", id, k)
			}
			if finalOnly[id] && firstFinalOnly < 0 {
				firstFinalOnly = k
			}
		case "receipt":
			if e.str("id") == "" || e.str("model") == "" || len(e.str("gateway_sig")) != 128 || e.str("provider") == "" ||
				e.str("status") != "attested" || e["key_id"] != nil {
				fail("receipt event %d: %v", k, e)
			}
		case "error":
			if e.str("message") == "" {
				fail("error event %d without a message", k)
			}
		default:
			fail("event %d has type %q", k, e.typ())
		}
	}
	// The after-stop lanes: after the last transcript, in their order,
	// each present unless an error after the last transcript says it (or
	// pass 2) failed.
	pos := lastTranscript
	for _, id := range lanes.Final {
		at := -1
		for k := lastTranscript + 1; k < len(evs); k++ {
			if evs[k].typ() == "lane" && evs[k].str("lane") == id {
				at = k
				break
			}
		}
		if at < 0 {
			if !failedAfter(evs[lastTranscript+1:], id) {
				fail("after-stop lane %s missing and no error event says why", id)
			}
			continue
		}
		if at < pos {
			fail("after-stop lane %s at event %d, before the lane run ahead of it (event %d)", id, at, pos)
		}
		pos = at
	}
	return bad
}

// failedAfter reports whether an error event among evs says lane id (or
// pass 2, which the lanes after it depend on) failed.
func failedAfter(evs []Event, id string) bool {
	for _, e := range evs {
		m := e.str("message")
		if e.typ() == "error" && (strings.Contains(m, "the "+id+" lane failed") || strings.HasPrefix(m, "pass 2 failed")) {
			return true
		}
	}
	return false
}

// Clip is the audio one live session replays: a stretch of a demo script's
// speech, cut in the silences between lines.
type Clip struct {
	Script     scripts.Script
	PCM        []byte // 16 kHz mono PCM16 little-endian
	From, To   float64
	Lines      int
	FirstLine  int
	ScriptEnds bool // the clip runs to the script's end
}

// Clips cuts a script's audio into clips of about max seconds each (whole
// lines; a line longer than max is a clip of its own), in the silences
// between lines, so every sentence is heard whole. max <= 0: the whole
// script is one clip.
func Clips(s scripts.Script, pcm []byte, lines []scripts.LineTiming, max float64) []Clip {
	const bytesPerS = 2 * scripts.SampleRate
	total := float64(len(pcm)) / bytesPerS
	if max <= 0 || len(lines) == 0 {
		return []Clip{{Script: s, PCM: pcm, From: 0, To: total, Lines: len(lines), FirstLine: 1, ScriptEnds: true}}
	}
	cut := func(k int) float64 { // the silence before line k (0-based); the end after the last
		switch {
		case k == 0:
			return 0
		case k >= len(lines):
			return total
		default:
			return (lines[k-1].End + lines[k].Start) / 2
		}
	}
	var out []Clip
	for k := 0; k < len(lines); {
		j := k + 1
		for j < len(lines) && cut(j+1)-cut(k) <= max {
			j++
		}
		from, to := cut(k), cut(j)
		a, b := int(from*bytesPerS)&^1, int(to*bytesPerS)&^1
		out = append(out, Clip{Script: s, PCM: pcm[a:min(b, len(pcm))], From: from, To: to, Lines: j - k, FirstLine: k + 1, ScriptEnds: j == len(lines)})
		k = j
	}
	return out
}

// LiveOutcome is one live session's end.
type LiveOutcome struct {
	Events   []Event
	Code     int
	SentS    float64 // seconds of audio sent
	Stopped  bool    // the soak ended before the clip did: stop was sent early
	Faults   []string
	Receipts int // receipt events fetched back and verified
	Errors   int // error events (lane failures, pass-2 notices)
	Took     time.Duration
}

// frameBytes is 100 ms of 16 kHz mono PCM16, what a live client sends.
const frameBytes = 3200

// Live runs one live session with token: the clip's audio as 100 ms frames
// paced in real time (frame k once its audio has been spoken, like a
// microphone), then stop; it reads every event until the socket closes,
// checks the sequence (CheckLive) and verifies every receipt event.
// Closing early stops the audio (the speaker stops): stop is sent at
// once. timeout bounds the whole session.
func (c *Client) Live(ctx context.Context, token string, clip Clip, early <-chan struct{}, timeout time.Duration) LiveOutcome {
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out LiveOutcome
	q := url.Values{"vertical": {clip.Script.Vertical}, "token": {token}}
	if clip.Script.Vertical == "translate" {
		q.Set("lang", clip.Script.Lang)
		q.Set("target", clip.Script.Target)
	}
	ws := "ws" + strings.TrimPrefix(c.Base, "http") + "/ws/live?" + q.Encode()
	conn, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: c.HTTP})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		out.Faults = []string{fmt.Sprintf("dial /ws/live (%s): %v (HTTP %d)", clip.Script.Vertical, err, status)}
		return out
	}
	defer conn.CloseNow()
	conn.SetReadLimit(8 << 20)

	// The reader owns events, code and readFaults until read is closed.
	read := make(chan struct{})
	var readFaults []string
	go func() {
		defer close(read)
		for {
			typ, data, err := conn.Read(ctx)
			if err != nil {
				out.Code = int(websocket.CloseStatus(err))
				if out.Code == -1 {
					readFaults = append(readFaults, fmt.Sprintf("read: %v", err))
				}
				return
			}
			var ev Event
			if typ != websocket.MessageText || json.Unmarshal(data, &ev) != nil {
				readFaults = append(readFaults, fmt.Sprintf("a frame that is not a JSON event: %q", clipStr(string(data))))
				continue
			}
			out.Events = append(out.Events, ev)
		}
	}()

	start := time.Now()
	sent := 0
send:
	for off := 0; off < len(clip.PCM); off += frameBytes {
		frame := clip.PCM[off:min(off+frameBytes, len(clip.PCM))]
		due := start.Add(time.Duration(float64(sent+len(frame)) / (2 * scripts.SampleRate) * float64(time.Second)))
		t := time.NewTimer(time.Until(due))
		select {
		case <-t.C:
		case <-early:
			t.Stop()
			out.Stopped = true
			break send
		case <-read:
			t.Stop()
			break send // the box ended the session
		case <-ctx.Done():
			t.Stop()
			break send
		}
		if err := conn.Write(ctx, websocket.MessageBinary, frame); err != nil {
			break // the reader sees why
		}
		sent += len(frame)
	}
	out.SentS = float64(sent) / (2 * scripts.SampleRate)
	select {
	case <-read:
	default:
		if err := conn.Write(ctx, websocket.MessageText, []byte(`{"type":"stop"}`)); err != nil && !errors.Is(err, context.Canceled) {
			out.Faults = append(out.Faults, fmt.Sprintf("send stop: %v", err))
		}
	}
	<-read
	out.Faults = append(out.Faults, readFaults...)
	out.Took = time.Since(began)
	if ctx.Err() != nil {
		out.Faults = append(out.Faults, fmt.Sprintf("no close within %s (%d events)", timeout, len(out.Events)))
	}
	out.Faults = append(out.Faults, CheckLive(clip.Script.Vertical, out.Events, out.Code)...)
	vctx, vcancel := context.WithTimeout(context.Background(), time.Minute)
	defer vcancel()
	for _, e := range out.Events {
		switch e.typ() {
		case "error":
			out.Errors++
		case "receipt":
			vf := c.Verify.Verify(vctx, Expect{ID: e.str("id"), Model: e.str("model"), Sig: e.str("gateway_sig"), Completion: -1})
			if len(vf) == 0 {
				out.Receipts++
			}
			out.Faults = append(out.Faults, vf...)
		}
	}
	return out
}
