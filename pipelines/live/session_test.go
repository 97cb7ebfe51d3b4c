package live_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/internal/problem"
	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
)

// testVertical has a local lane (counts sentences), a model lane and an
// after-stop lane.
func testVertical() *live.Vertical {
	count := &live.LaneSpec{ID: "count", Title: "Sentences", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			return fmt.Sprintf("%d sentences", len(st.Sentences)), map[string]any{"n": len(st.Sentences)}, nil
		}}
	topic := livetest.TopicLane()
	final := &live.LaneSpec{ID: "wrapup", Title: "Wrap-up", Local: true,
		Finish: func(st *live.State, _ int, _ json.RawMessage) (string, any, error) {
			return "lanes: " + fmt.Sprint(len(st.Lanes)), nil, nil
		}}
	return &live.Vertical{ID: "sales", Live: []*live.LaneSpec{count, topic}, Final: []*live.LaneSpec{final},
		Summary: func(st *live.State) map[string]any {
			return map[string]any{"sentences": len(st.Sentences), "lanes": len(st.Lanes)}
		}}
}

var script = []livetest.Line{
	{Text: "Hello, thanks for taking the call today.", Start: 0.2, End: 2.0},
	{Text: "We ship about forty pallets a week.", Start: 2.5, End: 4.0},
	{Text: "Our main problem is late deliveries.", Start: 4.4, End: 6.0},
}

func TestSessionEventsAndStop(t *testing.T) {
	rec := &livetest.Recorder{}
	budget := &livetest.Budget{Tokens: 5000, AudioMS: 60000, StopReserveTokens: 100}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: testVertical(), Models: live.Models{ASR: "whisper-test", LLM: "model-27b"},
		Transcribe: livetest.ScriptedTranscriber(script), Chat: livetest.TinyChat(t, 2048, 2), Budget: budget,
		Send: rec.Send, Debounce: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	livetest.Feed(t, s, 6.5)
	if err := s.Audio(context.Background(), make([]byte, 3)); err == nil {
		t.Error("odd frame accepted")
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := rec.Events()
	if evs[0].Type != live.TypeReady || evs[len(evs)-1].Type != live.TypeDone {
		t.Fatalf("first %s last %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	var finals, receipts, topicLanes int
	lastCount := -1
	prevAt := int64(-1)
	for _, e := range evs {
		if e.AtMS < prevAt {
			t.Errorf("at_ms goes back: %d after %d", e.AtMS, prevAt)
		}
		prevAt = e.AtMS
		switch b := e.Body.(type) {
		case live.TranscriptBody:
			if b.Final {
				finals++
			}
		case live.ReceiptBody:
			receipts++
			if b.Status != "attested" || b.ID == "" {
				t.Errorf("receipt %+v", b)
			}
		case live.LaneBody:
			if b.Lane == "count" {
				lastCount = b.Data.(map[string]any)["n"].(int)
			}
			if b.Lane == "topic" {
				topicLanes++
			}
		}
	}
	if finals != 3 || lastCount != 3 {
		t.Errorf("finals %d, last count %d", finals, lastCount)
	}
	if receipts == 0 || receipts != topicLanes {
		t.Errorf("receipts %d, topic lane events %d (one receipt per model call)", receipts, topicLanes)
	}
	done := evs[len(evs)-1].Body.(live.DoneBody)
	if done.Summary["sentences"] != 3 || done.Summary["lanes"] != 3 {
		t.Errorf("summary %v", done.Summary)
	}
	raw, _ := json.Marshal(evs[0])
	if !strings.HasPrefix(string(raw), `{"type":"ready","at_ms":`) || !strings.Contains(string(raw), `"receipts":"signed"`) {
		t.Errorf("ready JSON %s", raw)
	}
}

func TestSessionAudioBudget(t *testing.T) {
	rec := &livetest.Recorder{}
	budget := &livetest.Budget{Tokens: 5000, AudioMS: 1000, StopReserveTokens: 100}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: testVertical(), Transcribe: livetest.ScriptedTranscriber(script), Chat: livetest.TinyChat(t, 2048, 2), Budget: budget, Send: rec.Send,
	})
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 3200)
	var err2 error
	for i := 0; i < 20 && err2 == nil; i++ {
		err2 = s.Audio(context.Background(), frame)
	}
	if err2 != live.ErrEnded || s.Ending() == nil || s.Ending().Kind != problem.Budget || s.Ending().Message != "audio budget used up" {
		t.Fatalf("ending %v %+v", err2, s.Ending())
	}
	s.Close()
	evs := rec.Events()
	var sawZero bool
	for i, e := range evs {
		if b, ok := e.Body.(live.BudgetBody); ok && b.SecondsAudioLeft == 0 {
			sawZero = true
		}
		if e.Type == live.TypeError && i != len(evs)-1 {
			t.Errorf("error is not the last event")
		}
	}
	if !sawZero || evs[len(evs)-1].Type != live.TypeError {
		t.Errorf("no budget 0 event or no closing error: %v", evs)
	}
}

// TestSessionChargesShortFrames: frames shorter than a millisecond are
// charged by the samples they add up to, not rounded down to nothing each.
func TestSessionChargesShortFrames(t *testing.T) {
	budget := &livetest.Budget{Tokens: 5000, AudioMS: 10000, StopReserveTokens: 100}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: testVertical(), Transcribe: livetest.ScriptedTranscriber(script), Chat: livetest.TinyChat(t, 2048, 2), Budget: budget, Send: (&livetest.Recorder{}).Send,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// 8,000 frames of one 2-byte sample each: half a second of audio.
	for range 8000 {
		if err := s.Audio(context.Background(), []byte{0, 0}); err != nil {
			t.Fatal(err)
		}
	}
	// Then 3 ms in a 96-byte frame: 503 ms in all.
	if err := s.Audio(context.Background(), make([]byte, 96)); err != nil {
		t.Fatal(err)
	}
	if left, _ := budget.AudioLeftMS(context.Background()); left != 10000-503 {
		t.Errorf("audio left %d ms after 503 ms in short frames, want %d", left, 10000-503)
	}
}

func TestSessionPausesAtTheStopReserve(t *testing.T) {
	rec := &livetest.Recorder{}
	budget := &livetest.Budget{Tokens: 50, AudioMS: 60000, StopReserveTokens: 100}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: testVertical(), Transcribe: livetest.ScriptedTranscriber(script), Chat: livetest.TinyChat(t, 2048, 2), Budget: budget, Send: rec.Send, Debounce: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	livetest.Feed(t, s, 6.5)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	paused := 0
	for _, e := range rec.Events() {
		if b, ok := e.Body.(live.ErrorBody); ok && strings.Contains(b.Message, "paused") {
			paused++
		}
		if e.Type == live.TypeReceipt {
			t.Error("a model call ran inside the stop reserve")
		}
	}
	if paused != 1 {
		t.Errorf("%d pause errors, want 1", paused)
	}
}

// TestPromptFitsTheContext: a lane whose transcript outgrows the model's
// context is prompted with its latest lines only, keeping their numbers.
func TestPromptFitsTheContext(t *testing.T) {
	var mu sync.Mutex
	var seen []int // sentences in each prompt
	var first []int
	schema := json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","maxLength":8}},"required":["x"]}`)
	lane := &live.LaneSpec{ID: "long", Title: "Long", Schema: schema, MaxTokens: 1500,
		Prompt: func(st *live.State, _ int) (string, string) {
			mu.Lock()
			seen = append(seen, len(st.Sentences))
			if len(st.Sentences) > 0 {
				first = append(first, st.Sentences[0].I)
			}
			mu.Unlock()
			return "Summarise.", st.Lines()
		},
		Finish: func(st *live.State, _ int, a json.RawMessage) (string, any, error) { return string(a), nil, nil }}
	var lines []livetest.Line
	for i := 0; i < 60; i++ {
		lines = append(lines, livetest.Line{Text: "The inspector measured the clearance at the north wall and wrote down every reading carefully.", Start: float64(i), End: float64(i) + 0.9})
	}
	rec := &livetest.Recorder{}
	s, err := live.Start(context.Background(), live.Config{
		Vertical:   &live.Vertical{ID: "field", Final: []*live.LaneSpec{lane}},
		Transcribe: livetest.ScriptedTranscriber(lines), Chat: livetest.TinyChat(t, 2048, 2),
		Budget: &livetest.Budget{Tokens: 1e6, AudioMS: 1e7, StopReserveTokens: 10}, Send: rec.Send,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, e := range rec.Events() {
		if b, ok := e.Body.(live.ErrorBody); ok {
			t.Errorf("error event: %s", b.Message)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 2 || seen[0] != 60 || seen[len(seen)-1] >= 60 || first[len(first)-1] == 0 {
		t.Errorf("prompts saw %v sentences (first line index %v); want the full transcript first, then a trimmed one", seen, first)
	}
}

// TestSessionBudgetShowsSpendingAndThePauseHolds: two model lanes share a
// budget whose stop reserve a running call's reservation would reach.
// Budget events show what is spent (never going back up), lanes pause only
// once the unspent budget reaches the reserve, with a budget event and one
// error naming the paused lanes, and after it no model lane runs again.
func TestSessionBudgetShowsSpendingAndThePauseHolds(t *testing.T) {
	v := testVertical()
	second := livetest.TopicLane()
	second.ID, second.MaxTokens = "topic2", 600
	v.Live[1].MaxTokens = 600
	v.Live = append(v.Live, second)
	var lines []livetest.Line
	for i := range 12 {
		lines = append(lines, livetest.Line{Text: fmt.Sprintf("Sentence %d is about pallets and deliveries.", i), Start: float64(i) + 0.2, End: float64(i) + 0.9})
	}
	rec := &livetest.Recorder{}
	budget := &livetest.Budget{Tokens: 235, AudioMS: 60000, StopReserveTokens: 200}
	s, err := live.Start(context.Background(), live.Config{
		Vertical: v, Transcribe: livetest.ScriptedTranscriber(lines), Chat: livetest.TinyChat(t, 2048, 2), Budget: budget, Send: rec.Send, Debounce: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 13 { // a sentence a second, with time for the lanes to run on each
		livetest.Feed(t, s, 1)
		time.Sleep(150 * time.Millisecond)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	last := int64(-1)
	paused := false
	calls := map[string]int{}
	var lastBudget int64 = -1
	for _, e := range rec.Events() {
		switch b := e.Body.(type) {
		case live.BudgetBody:
			if last >= 0 && b.LLMTokensLeft > last {
				t.Errorf("llm_tokens_left went up from %d to %d: reservations shown as spending", last, b.LLMTokensLeft)
			}
			last, lastBudget = b.LLMTokensLeft, b.LLMTokensLeft
		case live.ErrorBody:
			if !strings.Contains(b.Message, "paused until stop") || !strings.Contains(b.Message, "topic, topic2") || !strings.Contains(b.Message, "count need no model and keep updating") {
				t.Errorf("error %q", b.Message)
			}
			if paused {
				t.Error("a second pause error")
			}
			paused = true
			if lastBudget > budget.StopReserveTokens {
				t.Errorf("paused while the last budget event said %d tokens left, above the %d reserve", lastBudget, budget.StopReserveTokens)
			}
		case live.ReceiptBody:
			if paused {
				t.Errorf("a model call after the pause: %v", b)
			}
		case live.LaneBody:
			if paused && (b.Lane == "topic" || b.Lane == "topic2") {
				t.Errorf("model lane %s updated after the pause", b.Lane)
			}
			calls[b.Lane]++
		}
	}
	if calls["topic"] == 0 || calls["topic2"] == 0 {
		t.Errorf("both model lanes should have run before any pause: %v", calls)
	}
	t.Logf("lane updates %v, paused %v, last budget %d", calls, paused, last)
}
