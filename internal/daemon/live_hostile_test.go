package daemon

import (
	"strings"
	"testing"
	"time"

	"boxd/configs"
	"boxd/pipelines/live"
	"boxd/pipelines/live/livetest"
	"boxd/web/api"
)

// TestLiveIdleSocketIsClosed: a socket that sends no audio after ready is
// closed after limits.live_idle_s with an error event and 4408, and its
// live slot is free again for the next client.
func TestLiveIdleSocketIsClosed(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Bounds.LiveIdleS = 1
	cfg.Limits.LiveCap = 1
	ts := wsServer(t, wsOpts{cfg: cfg, transcribe: livetest.ScriptedTranscriber(wsScript)})
	w := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
	evs, code := w.rest()
	if code != 4408 {
		t.Fatalf("an idle socket closed %d, want 4408: %v", code, evs)
	}
	checkClosing(t, evs, code)
	if msg := evs[len(evs)-1].str("message"); !strings.Contains(msg, "no audio for 1 s") || !strings.Contains(msg, "limits.live_idle_s") {
		t.Errorf("message %q", msg)
	}
	waitLive(t, ts, 0)
	w = wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
}

// TestLiveSocketEndsWhenTheDemoTokenExpires: a live session does not
// outlive its demo token: the next audio after the expiry ends it with an
// error event and 4401.
func TestLiveSocketEndsWhenTheDemoTokenExpires(t *testing.T) {
	clk := newClock(time.Now())
	cfg := configs.Defaults()
	ts := wsServer(t, wsOpts{cfg: cfg, now: clk.Now, transcribe: livetest.ScriptedTranscriber(wsScript)})
	w := wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil)
	w.expect(live.TypeReady)
	w.audio(0.2)
	clk.Advance(time.Duration(cfg.Limits.SessionLifetimeS)*time.Second + time.Second)
	w.audio(0.2)
	evs, code := w.rest()
	if code != 4401 {
		t.Fatalf("closed %d, want 4401: %v", code, evs)
	}
	checkClosing(t, evs, code)
	if msg := evs[len(evs)-1].str("message"); !strings.Contains(msg, "expired") {
		t.Errorf("message %q", msg)
	}
	waitLive(t, ts, 0)
}

// TestLiveDeadPeerIsDropped: a peer that answers no ping (it reads
// nothing) is dropped and its live slot freed.
func TestLiveDeadPeerIsDropped(t *testing.T) {
	every, timeout := api.PingEvery, api.PingTimeout
	api.PingEvery, api.PingTimeout = 100*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { api.PingEvery, api.PingTimeout = every, timeout })
	ts := wsServer(t, wsOpts{transcribe: livetest.ScriptedTranscriber(wsScript)})
	wsDial(t, ts, "vertical=sales&token="+session(t, ts, "sales"), nil) // never read: no pong
	waitLive(t, ts, 1)
	waitLive(t, ts, 0)
}
