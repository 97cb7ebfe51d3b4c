// Package demo declares the demo routes: the scripts, their replay through
// a live session of the real pipeline as server-sent events, and the
// recordings of replays (contract document 1, sections 2, 4 and 7).
package demo

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"time"

	"boxd/configs"

	"boxd/internal/problem"
	"boxd/web/api"

	"boxd/internal/families"
	"boxd/pipelines/live"
	"boxd/pipelines/live/scripts"
	"boxd/pipelines/replay"
)

// replayBody bounds POST /demo/replay's body.
const replayBody = 4 << 10

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log    *slog.Logger
	Config *configs.Config
	Now    func() time.Time
	// Sessions opens the replays' live sessions.
	Sessions *live.Opener
	// Transcribe starts speech recognition; nil: 503.
	Transcribe live.StartTranscriber
}

type routes struct {
	api        *api.API
	log        *slog.Logger
	cfg        *configs.Config
	now        func() time.Time
	sessions   *live.Opener
	transcribe live.StartTranscriber
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, cfg: d.Config, now: d.Now, sessions: d.Sessions, transcribe: d.Transcribe}
	s.demoRoutes()
}

// demoRoutes are the demo scripts, replay and recordings (contract
// document 1, sections 2, 4 and 7).
func (s *routes) demoRoutes() {
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/demo/scripts"}, s.demoScripts)
	api.Declare(s.api, api.Declared[replayRequest]{
		Route: api.Route{Method: http.MethodPost, Path: "/demo/replay", Auth: api.Bearer, Body: replayBody,
			MinTokens: 1, Audio: true, LiveSlot: true, Stream: true,
			Example: `{"vertical": "sales", "script_id": "sales-discovery-logistics", "speed": 2.0}`},
		VerticalOf: func(b *replayRequest) string {
			if b.Vertical == nil || b.ScriptID == nil || *b.ScriptID == "" {
				return "" // incomplete: Validate says what is missing (400)
			}
			return *b.Vertical
		},
		Validate: validReplay,
		Serve:    s.demoReplay,
	})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/demo/recordings"}, s.demoRecordings)
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/demo/recordings/{id}/events"}, s.demoRecordingEvents)
}

func (s *routes) demoAudioDir() string  { return scripts.CacheDir(s.cfg.StateDir) }
func (s *routes) recordingsDir() string { return replay.RecordingsDir(s.cfg.StateDir) }

// demoScripts is GET /demo/scripts: the eight scripts; duration_s is exact
// once a script's audio is cached, has_audio says whether replay can play
// it on this box.
func (s *routes) demoScripts(w http.ResponseWriter, r *http.Request) {
	api.WriteJSON(w, http.StatusOK, scripts.Catalog(s.demoAudioDir()))
}

// RecordingItem is one item of GET /demo/recordings.
type RecordingItem struct {
	ID        string  `json:"id"`
	Vertical  string  `json:"vertical"`
	Title     string  `json:"title"`
	DurationS float64 `json:"duration_s"`
	EventsURL string  `json:"events_url"`
	// Speed and RecordedAt say how and when the recorded replay ran.
	Speed      float64 `json:"speed"`
	RecordedAt int64   `json:"recorded_at"`
}

// demoRecordings is GET /demo/recordings: the latest clean replay of each
// script on this box (empty until a script has been replayed).
func (s *routes) demoRecordings(w http.ResponseWriter, r *http.Request) {
	list := []RecordingItem{}
	for _, rec := range replay.Recordings(s.recordingsDir()) {
		list = append(list, RecordingItem{ID: rec.ID, Vertical: rec.Vertical, Title: rec.Title, DurationS: rec.DurationS,
			EventsURL: "/demo/recordings/" + rec.ID + "/events", Speed: rec.Speed, RecordedAt: rec.RecordedAt})
	}
	api.WriteJSON(w, http.StatusOK, list)
}

// demoRecordingEvents is GET /demo/recordings/{id}/events: the recorded
// events, each with at_ms.
func (s *routes) demoRecordingEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := replay.LoadRecording(s.recordingsDir(), id)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, ok := scripts.Lookup(id); ok {
				api.WriteProblem(w, problem.New(problem.NotFound, "script %s has no recording on this box yet; a replay that finishes cleanly (POST /demo/replay, or boxd demo record) makes one", id))
			} else {
				api.WriteProblem(w, problem.New(problem.NotFound, "no script %q; GET /demo/scripts lists them", id))
			}
			return
		}
		s.log.Error("recording unreadable", "script", id, "err", err)
		api.WriteProblem(w, problem.New(problem.Internal, "%s", "the recording of "+id+" cannot be read; replay the script to record it again"))
		return
	}
	api.WriteJSON(w, http.StatusOK, rec.Events)
}

// ReplaySleep paces replays; nil paces by the wall clock. Only this
// package's tests set it (to a fake clock).
var ReplaySleep func(time.Duration)

// replayRequest is the body of POST /demo/replay.
type replayRequest struct {
	Vertical *string  `json:"vertical"`
	ScriptID *string  `json:"script_id"`
	Speed    *float64 `json:"speed"`
}

// validReplay checks a replay body: vertical and script_id are required
// (400), the script must exist and be of that vertical (404), and speed
// must be 1.0 to 2.0 (400).
func validReplay(body *replayRequest) error {
	if body.Vertical == nil || *body.Vertical == "" || body.ScriptID == nil || *body.ScriptID == "" {
		return problem.New(problem.Invalid, "vertical and script_id are required: send {\"vertical\": \"clinical\", \"script_id\": \"clinical-back-pain\", \"speed\": 1.0}; GET /demo/scripts lists the scripts")
	}
	vertical, id := *body.Vertical, *body.ScriptID
	sc, ok := scripts.Lookup(id)
	if !ok {
		return problem.New(problem.NotFound, "no script %q; GET /demo/scripts lists them", id)
	}
	if sc.Vertical != vertical {
		return problem.New(problem.NotFound, "script %s belongs to the %s vertical, not %s; GET /demo/scripts lists the scripts of each vertical", id, sc.Vertical, vertical)
	}
	if body.Speed != nil && !replay.ValidSpeed(*body.Speed) {
		return problem.New(problem.Invalid, "speed must be between 1.0 and 2.0, not %g", *body.Speed)
	}
	return nil
}

// demoReplay is POST /demo/replay: the script's audio paced in real time
// (divided by speed) through a live session of the real pipeline,
// streamed as server-sent events. Refusals before the stream starts are
// statuses, in the order of every declared route: 401 token, 400 bad
// body, 403 a token of another vertical, 404 unknown script or a script
// of another vertical, 400 speed, 402 budget, 409 token already live, 429
// live cap (Retry-After 30), then 503 no audio for the script on this box.
func (s *routes) demoReplay(a *api.Admitted, body *replayRequest) {
	defer s.api.SessionStarted()()
	w, r, pr := a.W, a.R, a.Principal
	vertical, id := *body.Vertical, *body.ScriptID
	sc, _ := scripts.Lookup(id)
	speed := replay.DefaultSpeed
	if body.Speed != nil {
		speed = *body.Speed
	}
	pcm, _, err := scripts.Audio(r.Context(), s.demoAudioDir(), id)
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		s.log.Error("demo audio unavailable", "script", id, "err", err)
		if errors.Is(err, scripts.ErrNoSynthesizer) {
			api.WriteProblem(w, problem.Wrap(problem.Unavailable, err, "this box has no audio for %s: install espeak-ng (apt install espeak-ng), which synthesises the demo scripts", id))
			return
		}
		api.WriteProblem(w, problem.Wrap(problem.Internal, err, "the audio of %s could not be made: %v", id, err))
		return
	}

	lang, target := "", ""
	if families.AcceptsLiveParam(sc.Vertical, "lang") {
		lang, target = sc.Lang, sc.Target
	}
	rec := replay.NewRecorder(sc, float64(len(pcm))/(2*scripts.SampleRate), speed)
	sse := &sseEvents{sse: api.NewSSE(w)}
	defer sse.sse.Close()
	who := live.Caller{Budget: api.Budget{Principal: pr}, Demo: !pr.IsKey(), OnRevoke: pr.OnRevoke}
	sess, release, d := s.sessions.Open(r.Context(), who, vertical, lang, target, s.transcribe, func(e live.Event) error {
		rec.Add(e)
		return sse.send(e)
	})
	if d != nil {
		sse.refuse(d)
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	early := s.watchShutdown(ctx, cancel, sess)
	err = replay.RunUntil(ctx, sess, pcm, speed, ReplaySleep, early)
	switch {
	case err == nil && s.api.Draining():
		// Stopped early by the shutdown: not the whole script, not kept.
		s.log.Info("demo replay", "script", id, "speed", speed, "caller", pr.LogID(), "outcome", "stopped by shutdown")
	case err == nil:
		if serr := rec.Save(s.recordingsDir(), s.now()); serr != nil {
			s.log.Info("demo replay not recorded", "script", id, "reason", serr)
		}
		s.log.Info("demo replay", "script", id, "speed", speed, "caller", pr.LogID(), "outcome", "done")
	case r.Context().Err() != nil:
		s.log.Info("demo replay", "script", id, "speed", speed, "caller", pr.LogID(), "outcome", "client left")
	default:
		s.log.Info("demo replay", "script", id, "speed", speed, "caller", pr.LogID(), "outcome", err.Error())
	}
}

// watchShutdown follows a replay across a drain: when the box starts to
// shut down, the session is told so and the returned channel closes (the
// replay stops sending audio and finishes, so done still arrives); when the
// grace is over, the session ends with the error event and ctx is
// cancelled. It stops watching when ctx ends.
func (s *routes) watchShutdown(ctx context.Context, cancel context.CancelFunc, sess *live.Session) <-chan struct{} {
	early := make(chan struct{})
	go func() {
		select {
		case <-s.api.Drain():
			sess.Error(live.StopMessage)
			close(early)
		case <-ctx.Done():
			return
		}
		select {
		case <-s.api.Cut():
			sess.End(problem.ShuttingDown, live.CutMessage)
			cancel()
		case <-ctx.Done():
		}
	}()
	return early
}

// sseEvents writes a live session's events on the one SSE writer. Like
// the socket, the stream ends with the session's ending error event (its
// emitter sends nothing after it).
type sseEvents struct {
	sse *api.SSE
}

func (k *sseEvents) send(e live.Event) error { return k.sse.Send(e) }

// refuse answers a refusal: its status before the stream started, else an
// error event.
func (k *sseEvents) refuse(err error) {
	msg := err.Error()
	if p, ok := problem.As(err); ok {
		msg = p.Message
	}
	k.sse.Fail(err, live.Event{Type: live.TypeError, Body: live.ErrorBody{Message: msg}})
}
