package daemon

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"boxd/configs"
	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
	"boxd/web/api"
)

// silence sends a 100 ms frame of silence every 200 ms on c until ctx
// ends or the socket fails: bytes enough for limits.live_idle_s, no
// speech.
func silence(ctx context.Context, c *websocket.Conn) {
	frame := make([]byte, 3200)
	for {
		if c.Write(ctx, websocket.MessageBinary, frame) != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestLiveSilenceDoesNotHoldSlots is the probe's finding (100 ms of
// silence every 45 s kept all 4 live slots held) and the bounded load
// test of idle sockets: four sockets fill the live cap and keep sending
// silence, more often than limits.live_idle_s asks; no speech is ever
// recognised, so each is closed after limits.live_speech_idle_s with an
// error event naming it and 4408, and the slots are free again for the
// next client. Before the fix the sockets stayed open as long as their
// bytes kept coming (the test's senders stop by themselves after 30 s).
func TestLiveSilenceDoesNotHoldSlots(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Limits.LiveCap = 4
	cfg.Bounds.LiveIdleS = 5 // the senders' frames keep it from firing
	cfg.Bounds.LiveSpeechIdleS = 1
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(nil)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var senders sync.WaitGroup
	defer senders.Wait()
	defer cancel()
	var socks []*wsClient
	for range 4 {
		w := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
		w.expect(live.TypeReady)
		senders.Go(func() { silence(ctx, w.c) })
		socks = append(socks, w)
	}
	waitLive(t, ts, 4)
	for i, w := range socks {
		evs, code := w.rest()
		if code != 4408 {
			t.Fatalf("silent socket %d closed %d, want 4408 (no speech): %v", i, code, evs)
		}
		checkClosing(t, evs, code)
		if msg := evs[len(evs)-1].str("message"); !strings.Contains(msg, "no speech for 1 s") || !strings.Contains(msg, "limits.live_speech_idle_s") {
			t.Errorf("socket %d: message %q", i, msg)
		}
	}
	waitLive(t, ts, 0)
	w := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
}

// TestLiveSpeechKeepsASessionOpen: a socket on which speech is recognised
// every half second stays open past limits.live_speech_idle_s (2 s here)
// and ends with done when it stops.
func TestLiveSpeechKeepsASessionOpen(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Bounds.LiveSpeechIdleS = 2
	var lines []livetest.Line
	for i := range 12 {
		at := 0.1 + 0.5*float64(i)
		lines = append(lines, livetest.Line{Text: "We ship forty pallets every week.", Start: at, End: at + 0.4})
	}
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(lines)})
	w := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
	// Real time: 100 ms of audio every 100 ms for 5 s, well past the 2 s.
	for range 50 {
		w.audio(0.1)
		time.Sleep(100 * time.Millisecond)
	}
	w.stop()
	evs, code := w.rest()
	if code != api.CloseNormal {
		t.Fatalf("a socket with speech closed %d: %v", code, evs[len(evs)-1])
	}
	checkClosing(t, evs, code)
}
