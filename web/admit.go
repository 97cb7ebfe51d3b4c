package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"mime"
	"net/http"
	"strings"
	"time"

	"boxd/internal/platform"
	"boxd/internal/problem"
	"boxd/web/upload"
)

// Auth is who may call a route.
type Auth uint8

const (
	// Public routes need no credentials.
	Public Auth = iota
	// Bearer routes need a demo session token or a developer key.
	Bearer
	// Admin routes need the admin secret, server to server.
	Admin
	// KeyOnly routes need a developer key: a demo session token is 403.
	KeyOnly
)

// Route declares how one route is admitted. Every route family joins the
// server by declaring its routes (see declare); admit applies the
// declaration in one fixed order, the same for every route:
//
//  1. 401: credentials (Auth); a developer key's per-minute request
//     limit (429) is applied here too, with authentication, so a flood is
//     refused before its bodies are read;
//  2. 400 / 413 / 415: the JSON body (Body, Lenient);
//  3. 403: the token's vertical against the route's (Verticals) and the
//     one the body names (VerticalOf);
//  4. validation of the body (Validate: 400, 404, 413, ...), then
//     limits.require_synthetic for a body carrying the caller's own data
//     (synthetic.go: 400);
//  5. 409: one run at a time per demo token (OneRun);
//  6. 402: budget before the start (MinTokens, TokensFor, Audio);
//  7. 503: a box-wide busy limit (declareGated); 409 / 429: a live slot
//     (LiveSlot); a model-call slot (CallSlot; 503 when demo tokens
//     together run their share of the chat model's sequences);
//  8. the run (Serve).
//
// Every slot (steps 5 and 7) is taken only once the body has arrived
// whole, within the route's size limit (413) and the body's read
// deadline (408, limits.go): a client that declares a large body and
// sends it slowly, or not at all, holds a connection and the bytes it
// sent, never a slot another caller waits for.
type Route struct {
	Method, Path string
	Auth         Auth
	// Verticals the token must be for (a demo token's vertical, or one a
	// key is allowed); empty: any.
	Verticals []string
	// Body is the JSON body limit in bytes (with Uploads: of the fields
	// other than the uploads); 0 reads no body.
	Body int64
	// Uploads are the body's base64 fields (video_b64, file_b64, ...):
	// each is streamed through a decoder to a temporary file under its
	// limit (413 naming it) instead of being held in memory; the files
	// are removed when the run returns.
	Uploads []upload.Field
	// BodyOptional: an empty body (Content-Length: 0) reads as {}.
	BodyOptional bool
	// Lenient ignores unknown body fields (OpenAI clients send fields a
	// box does not use); otherwise they are refused.
	Lenient bool
	// OneRun holds a demo token's one-run-at-a-time lock for the run.
	OneRun bool
	// MinTokens generated tokens must be left before the run starts.
	MinTokens int64
	// Audio: some audio budget must be left.
	Audio bool
	// LiveSlot takes a live slot for the run (one per demo token, the
	// key's and the box's live caps).
	LiveSlot bool
	// CallSlot takes one of a demo token's concurrent model-call slots
	// for the run (limits.demo_concurrent_calls; a call over them waits
	// for one of the token's own, 429 when too many wait).
	CallSlot bool
	// Stream: the route may answer server-sent events (stream: true in
	// the body or Accept: text/event-stream).
	Stream bool
	// Example is a minimal valid body (for the docs and the admission
	// order test, which sends it to every declared route).
	Example string

	// gate is a box-wide busy limit (declareGated): one of its slots is
	// held from step 7 until the answer is written; none free is 503
	// naming what (gateWhat) the box serves at once.
	gate     chan struct{}
	gateWhat string
}

// Declared is a route's declaration with its typed body and handler.
type Declared[Req any] struct {
	Route
	// VerticalOf is the vertical the body names ("" for none), checked
	// against the token (403) after the body is read.
	VerticalOf func(*Req) string
	// Uploaded hands the decoded upload fields (Route.Uploads) to the
	// body, right after it is read, so that Validate can see which came.
	Uploaded func(*Req, *upload.Upload)
	// Validate checks the body after the vertical.
	Validate func(*Req) error
	// TokensFor is the minimum tokens this body needs when it depends on
	// the body (added to MinTokens' check; 0 for none).
	TokensFor func(*Req) int64
	// BudgetHint, when set, adds to a 402 what the caller can do about it
	// with this body (a model pass it can turn off).
	BudgetHint func(*Req) string
	// StreamOf reports the body's stream flag.
	StreamOf func(*Req) bool
	// Serve runs the admitted request and writes its answer.
	Serve func(a *Admitted, req *Req)
}

// Admitted is a request that passed admission.
type Admitted struct {
	W http.ResponseWriter
	R *http.Request
	// Principal is the caller of a Bearer route (nil otherwise).
	Principal *platform.Principal
	// Stream is set when the caller asked for server-sent events on a
	// streaming route.
	Stream bool
	// Upload holds the decoded upload fields (Route.Uploads).
	Upload *upload.Upload
	// LiveRelease frees the live slot taken for the run (LiveSlot); it
	// is also called when Serve returns.
	LiveRelease func()
}

// declare registers a declared route on s.
func declare[Req any](s *Server, d Declared[Req]) {
	s.mu.Lock()
	s.declared = append(s.declared, d.Route)
	s.mu.Unlock()
	s.Handle(d.Method, d.Path, func(w http.ResponseWriter, r *http.Request) { admit(s, d, w, r) })
}

// admit applies d's declaration to one request in the documented order
// and runs it.
func admit[Req any](s *Server, d Declared[Req], w http.ResponseWriter, r *http.Request) {
	a := &Admitted{W: w, R: r}
	// 1. Credentials.
	switch d.Auth {
	case Admin:
		if err := s.checkAdmin(r); err != nil {
			writeProblem(w, err)
			return
		}
	case Bearer, KeyOnly:
		token, ok := bearer(r)
		if !ok {
			writeProblem(w, problem.New(problem.Unauthorized, "the Authorization header must be Bearer <demo session token or dk_ developer key>"))
			return
		}
		pr, err := s.platform.Authenticate(r.Context(), token, "")
		if err != nil {
			writeProblem(w, err)
			return
		}
		if d.Auth == KeyOnly && !pr.IsKey() {
			writeProblem(w, problem.New(problem.Forbidden, "%s %s needs a developer key (Bearer dk_...): a demo session cannot use it", d.Method, d.Path))
			return
		}
		a.Principal = pr
	}
	// 2. The body.
	req := new(Req)
	if len(d.Uploads) > 0 {
		if err := checkJSONType(r); err != nil {
			writeProblem(w, err)
			return
		}
		opt := upload.Options{Fields: d.Uploads, SmallLimit: d.Body}
		if limit := opt.BodyLimit(); r.ContentLength > limit {
			writeProblem(w, tooLarge(limit))
			return
		}
		u, err := upload.Read(r.Context(), http.MaxBytesReader(w, r.Body, opt.BodyLimit()), opt, req)
		if err != nil {
			writeProblem(w, err)
			return
		}
		a.Upload = u
		defer func() {
			if err := u.Remove(); err != nil {
				s.log.Warn("upload files not removed", "route", d.Path, "err", err)
			}
		}()
		if d.Uploaded != nil {
			d.Uploaded(req, u)
		}
	} else if d.Body > 0 && !(d.BodyOptional && r.ContentLength == 0) {
		var err *problem.Error
		if d.Lenient {
			err = decodeOpenAI(w, r, d.Body, req)
		} else {
			err = decodeJSON(w, r, d.Body, req)
		}
		if err != nil {
			writeProblem(w, err)
			return
		}
	}
	// 3. The vertical.
	if pr := a.Principal; pr != nil {
		if err := allowAny(pr, d.Verticals); err != nil {
			writeProblem(w, err)
			return
		}
		if d.VerticalOf != nil {
			if v := d.VerticalOf(req); v != "" {
				if err := pr.Allow(v); err != nil {
					writeProblem(w, err)
					return
				}
			}
		}
	}
	// 4. Validation, then the operator's synthetic rule
	// (limits.require_synthetic) for a body carrying the caller's data.
	if d.Validate != nil {
		if err := d.Validate(req); err != nil {
			writeProblem(w, err)
			return
		}
	}
	if err := s.checkSynthetic(req); err != nil {
		writeProblem(w, err)
		return
	}
	pr := a.Principal
	// 5. One run per demo token.
	if d.OneRun && pr != nil {
		unlock, err := pr.Lock()
		if err != nil {
			writeProblem(w, err)
			return
		}
		defer unlock()
	}
	// 6. Budget.
	if pr != nil {
		need := d.MinTokens
		if d.TokensFor != nil {
			need = max(need, d.TokensFor(req))
		}
		if need > 0 {
			if err := pr.RequireTokens(r.Context(), need); err != nil {
				if d.BudgetHint != nil && problem.Is(err, problem.Budget) {
					if h := d.BudgetHint(req); h != "" {
						e := *err
						e.Message += ": " + h
						err = &e
					}
				}
				writeProblem(w, err)
				return
			}
		}
		if d.Audio {
			if err := pr.RequireAudio(r.Context()); err != nil {
				writeProblem(w, err)
				return
			}
		}
	}
	// 7. A busy limit, a live slot, a model-call slot: only now, with the
	// body read whole.
	if d.gate != nil {
		select {
		case d.gate <- struct{}{}:
			defer func() { <-d.gate }()
		default:
			writeProblem(w, problem.New(problem.Busy, "the box is serving %d %s at once, its limit; retry after the time in Retry-After", cap(d.gate), d.gateWhat).Retry(time.Second))
			return
		}
	}
	if d.LiveSlot && pr != nil {
		release, err := pr.AcquireLive()
		if err != nil {
			writeProblem(w, err)
			return
		}
		a.LiveRelease = release
		defer release()
	}
	if d.CallSlot && pr != nil {
		release, err := pr.AcquireCall(r.Context())
		if err != nil {
			writeProblem(w, err)
			return
		}
		defer release()
		if !pr.IsKey() {
			share, err := s.demoCallShare(r.Context())
			if err != nil {
				writeProblem(w, err)
				return
			}
			defer share()
		}
	}
	// 8. The run.
	if d.Stream {
		a.Stream = wantsStream(r) || (d.StreamOf != nil && d.StreamOf(req))
	}
	d.Serve(a, req)
}

// allowAny refuses (403) a principal allowed none of verticals (none
// declared: any).
func allowAny(pr *platform.Principal, verticals []string) error {
	var first error
	for _, v := range verticals {
		err := pr.Allow(v)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// wantsStream reports whether the request asks for server-sent events
// with its Accept header (the body's stream flag is the route's).
func wantsStream(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// checkAdmin guards the admin routes: Authorization: Bearer <admin
// secret>, compared in constant time; 503 when no secret is configured,
// 403 from a browser (these routes are server to server), 429 from a
// network that sent too many wrong secrets within a minute (adminLockout,
// the right secret included), 401 when it is missing or wrong.
func (s *Server) checkAdmin(r *http.Request) error {
	if !s.cfg.AdminSecret.IsSet() {
		return problem.New(problem.Unavailable, "no admin secret is configured on this box; set BOXD_ADMIN_SECRET or admin_secret_file and restart boxd")
	}
	if r.Header.Get("Origin") != "" {
		return problem.New(problem.Forbidden, "admin routes are called server to server, never from a browser")
	}
	network, now := platform.Network(r.RemoteAddr), s.now()
	if err := s.adminLockout(network, now); err != nil {
		return err
	}
	token, ok := bearer(r)
	if !ok || token == "" {
		return problem.New(problem.Unauthorized, "admin routes need Authorization: Bearer <admin secret>")
	}
	got := sha256.Sum256([]byte(token))
	want := sha256.Sum256([]byte(s.cfg.AdminSecret.Reveal()))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		s.adminFailed(network, r.Pattern, now)
		return problem.New(problem.Unauthorized, "wrong admin secret")
	}
	return nil
}
