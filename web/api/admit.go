package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"boxd/internal/run"

	"boxd/internal/platform"
	"boxd/internal/problem"
	"boxd/web/api/upload"
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
//  7. 503: a box-wide busy limit (Route.Gate); 409 / 429: a live slot
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
	// Socket: the route answers a WebSocket upgrade (the live route). Its
	// upgrades go past the Host and Origin guards (the route checks both
	// after the upgrade, so that a refusal is an error event and a close
	// code, contract section 7) and the handler refuses through the same
	// problem table, as close codes.
	Socket bool
	// Example is a minimal valid body (for the docs and the admission
	// order test, which sends it to every declared route).
	Example string

	// newBody makes an empty body of the declared type (NewBody).
	newBody func() any

	// Gate is a box-wide busy limit: one of its slots is held from step 7
	// until the answer is written (Gate.take: busy is decided there).
	Gate *Gate
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
	// Validate checks the body after the vertical; nil: the body's own
	// Validate() error method, when it has one.
	Validate func(*Req) error
	// ValidateFor checks what depends on the caller after Validate (a
	// limit that is smaller for a demo session than for a developer key):
	// pr is nil on a public route.
	ValidateFor func(pr *platform.Principal, r *Req) error
	// TokensFor is the minimum tokens this body needs when it depends on
	// the body (added to MinTokens' check; 0 for none).
	TokensFor func(*Req) int64
	// BudgetHint, when set, adds to a 402 what the caller can do about it
	// with this body (a model pass it can turn off).
	BudgetHint func(*Req) string
	// StreamOf reports the body's stream flag; nil: the body's own
	// Streaming() bool method, when it has one.
	StreamOf func(*Req) bool
	// Upgrade, for a socket route (Route.Socket), upgrades the connection
	// before admission; refusals are then told on the socket (Conn.Refuse).
	// false: the upgrade failed and answered the request.
	Upgrade func(w http.ResponseWriter, r *http.Request) (Conn, bool)
	// Token reads the caller's token where the route takes it besides the
	// Authorization header (a socket's ?token=): "" when it is not there,
	// an error to refuse (its missing token, said the route's way).
	Token func(r *http.Request) (string, error)
	// Query reads a socket route's request from its URL query: admission
	// step 2 for a route whose request has no body (400 / 4400).
	Query func(q url.Values, req *Req) error
	// Do answers the admitted request with one JSON value (200), or an
	// error told through the problem table. A route declares one of Do,
	// Run or Serve.
	Do func(a *Admitted, req *Req) (any, error)
	// Run is a run on the one transport (API.Run): env.Events is a stream
	// when the caller asked for one, else a collector whose receipts and
	// budget fill the answer; env.Budget is the caller's. The pipeline
	// sends done itself. The returned value is a stream: false answer.
	Run func(a *Admitted, req *Req, env run.Env) (any, error)
	// Serve writes its own answer (a page, a file, a socket, a chat
	// stream in OpenAI's shape) with this package's writers.
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
	// Conn is the upgraded connection of a socket route (Declared.Upgrade).
	Conn Conn
	// LiveRelease frees the live slot taken for the run (LiveSlot); it
	// is also called when Serve returns.
	LiveRelease func()
}

// Declare registers a declared route on s: the one way a route joins
// the server.
func Declare[Req any](s *API, d Declared[Req]) {
	n := 0
	for _, set := range []bool{d.Do != nil, d.Run != nil, d.Serve != nil} {
		if set {
			n++
		}
	}
	if d.Socket != (d.Upgrade != nil) {
		panic("api.Declare " + d.Method + " " + d.Path + ": a socket route declares Upgrade, and only a socket route")
	}
	if n != 1 {
		panic("api.Declare " + d.Method + " " + d.Path + ": declare exactly one of Do, Run and Serve")
	}
	d.newBody = func() any { return new(Req) }
	s.mu.Lock()
	s.declared = append(s.declared, d.Route)
	if d.Socket {
		s.sockets = append(s.sockets, d.Path)
	}
	s.mu.Unlock()
	s.mux.Handle(d.Method, d.Path, func(w http.ResponseWriter, r *http.Request) { admit(s, d, w, r) })
}

// admit applies d's declaration to one request in the documented order
// and runs it.
func admit[Req any](s *API, d Declared[Req], w http.ResponseWriter, r *http.Request) {
	a := &Admitted{W: w, R: r}
	// A refusal is a status and {"error"}, or, on a socket, an error event
	// and a close code (contract section 7): the same table either way.
	refuse := func(err error) { WriteProblem(w, err) }
	if d.Socket {
		// Counted before the upgrade: http.Server.Shutdown waits for the
		// request until it is hijacked, so the server sees the count.
		defer s.SessionStarted()()
		conn, ok := d.Upgrade(w, r)
		if !ok {
			return // the upgrade answered the request
		}
		a.Conn, refuse = conn, conn.Refuse
	}
	// 1. Credentials.
	switch d.Auth {
	case Admin:
		if err := s.checkAdmin(r); err != nil {
			refuse(err)
			return
		}
	case Bearer, KeyOnly:
		token, ok := BearerToken(r)
		if d.Token != nil {
			t, err := d.Token(r)
			if err != nil {
				refuse(err)
				return
			}
			if t != "" {
				token, ok = t, true
			}
		}
		if !ok {
			refuse(problem.New(problem.Unauthorized, "the Authorization header must be Bearer <demo session token or dk_ developer key>"))
			return
		}
		pr, err := s.Platform.Authenticate(r.Context(), token, "")
		if err != nil {
			refuse(err)
			return
		}
		if d.Auth == KeyOnly && !pr.IsKey() {
			refuse(problem.New(problem.Forbidden, "%s %s needs a developer key (Bearer dk_...): a demo session cannot use it", d.Method, d.Path))
			return
		}
		a.Principal = pr
	}
	// 2. The body.
	req := new(Req)
	if len(d.Uploads) > 0 {
		if err := checkJSONType(r); err != nil {
			refuse(err)
			return
		}
		opt := upload.Options{Fields: d.Uploads, SmallLimit: d.Body}
		if limit := opt.BodyLimit(); r.ContentLength > limit {
			refuse(tooLarge(limit))
			return
		}
		u, err := upload.Read(r.Context(), http.MaxBytesReader(w, r.Body, opt.BodyLimit()), opt, req)
		if err != nil {
			refuse(err)
			return
		}
		a.Upload = u
		defer func() {
			if err := u.Remove(); err != nil {
				s.Log.Warn("upload files not removed", "route", d.Path, "err", err)
			}
		}()
		if d.Uploaded != nil {
			d.Uploaded(req, u)
		}
	} else if d.Query != nil {
		if err := d.Query(r.URL.Query(), req); err != nil {
			if _, ok := problem.As(err); !ok {
				err = problem.New(problem.Invalid, "%s", err.Error())
			}
			refuse(err)
			return
		}
	} else if d.Body > 0 && !(d.BodyOptional && r.ContentLength == 0) {
		var err *problem.Error
		if d.Lenient {
			err = DecodeOpenAI(w, r, d.Body, req)
		} else {
			err = DecodeJSON(w, r, d.Body, req)
		}
		if err != nil {
			refuse(err)
			return
		}
	}
	// 3. The vertical.
	if pr := a.Principal; pr != nil {
		if err := allowAny(pr, d.Verticals); err != nil {
			refuse(err)
			return
		}
		if d.VerticalOf != nil {
			if v := d.VerticalOf(req); v != "" {
				if err := pr.Allow(v); err != nil {
					refuse(err)
					return
				}
			}
		}
	}
	// 4. Validation, then the operator's synthetic rule
	// (limits.require_synthetic) for a body carrying the caller's data.
	validate := d.Validate
	if v, ok := any(req).(validator); ok && validate == nil {
		validate = func(*Req) error { return v.Validate() }
	}
	if validate != nil {
		if err := validate(req); err != nil {
			refuse(err)
			return
		}
	}
	if d.ValidateFor != nil {
		if err := d.ValidateFor(a.Principal, req); err != nil {
			refuse(err)
			return
		}
	}
	if err := s.checkSynthetic(req); err != nil {
		refuse(err)
		return
	}
	pr := a.Principal
	// 5. One run per demo token.
	if d.OneRun && pr != nil {
		unlock, err := pr.Lock()
		if err != nil {
			refuse(err)
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
				refuse(err)
				return
			}
		}
		if d.Audio {
			if err := pr.RequireAudio(r.Context()); err != nil {
				refuse(err)
				return
			}
		}
	}
	// 7. A busy limit, a live slot, a model-call slot: only now, with the
	// body read whole.
	if d.Gate != nil {
		release, err := d.Gate.take(r.Context())
		if err != nil {
			refuse(err)
			return
		}
		defer release()
	}
	if d.LiveSlot && pr != nil {
		release, err := pr.AcquireLive()
		if err != nil {
			refuse(err)
			return
		}
		a.LiveRelease = release
		defer release()
	}
	if d.CallSlot && pr != nil {
		release, err := pr.AcquireCall(r.Context())
		if err != nil {
			refuse(err)
			return
		}
		defer release()
		if !pr.IsKey() {
			share, err := s.demoShare.take(r.Context())
			if err != nil {
				refuse(err)
				return
			}
			defer share()
		}
	}
	// 8. The run.
	if d.Stream {
		a.Stream = WantsStream(r)
		switch st, ok := any(req).(streamer); {
		case d.StreamOf != nil:
			a.Stream = a.Stream || d.StreamOf(req)
		case ok:
			a.Stream = a.Stream || st.Streaming()
		}
	}
	switch {
	case d.Do != nil:
		answer, err := d.Do(a, req)
		if err != nil {
			refuse(err)
			return
		}
		WriteJSON(w, http.StatusOK, answer)
	case d.Run != nil:
		s.Run(a, func(ctx context.Context, em *run.Emitter) (any, error) {
			return d.Run(a, req, run.Env{Events: em, Budget: a.Budget()})
		})
	default:
		d.Serve(a, req)
	}
}

// Budget is the caller's budget a run spends (nil for a Public route).
func (a *Admitted) Budget() run.Budget {
	if a.Principal == nil {
		return nil
	}
	return Budget{Principal: a.Principal}
}

// validator is a request type that checks itself (admission step 4, when
// the declaration has no Validate of its own).
type validator interface{ Validate() error }

// streamer is a request type that says whether the caller asked for a
// stream (stream: true), read on a Stream route when the declaration has
// no StreamOf.
type streamer interface{ Streaming() bool }

// Conn is a socket route's upgraded connection: Refuse tells a refusal
// on it (an error event, then the kind's close code) and closes it.
type Conn interface {
	Refuse(err error)
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
func WantsStream(r *http.Request) bool {
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
func (s *API) checkAdmin(r *http.Request) error {
	if !s.Config.AdminSecret.IsSet() {
		return problem.New(problem.Unavailable, "no admin secret is configured on this box; set BOXD_ADMIN_SECRET or admin_secret_file and restart boxd")
	}
	if r.Header.Get("Origin") != "" {
		return problem.New(problem.Forbidden, "admin routes are called server to server, never from a browser")
	}
	network, now := platform.Network(r.RemoteAddr), s.Now()
	if err := s.adminLockout(network, now); err != nil {
		return err
	}
	token, ok := BearerToken(r)
	if !ok || token == "" {
		return problem.New(problem.Unauthorized, "admin routes need Authorization: Bearer <admin secret>")
	}
	got := sha256.Sum256([]byte(token))
	want := sha256.Sum256([]byte(s.Config.AdminSecret.Reveal()))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		s.adminFailed(network, r.Pattern, now)
		return problem.New(problem.Unauthorized, "wrong admin secret")
	}
	return nil
}

// WantsWebSocket reports whether r asks for a WebSocket upgrade.
func WantsWebSocket(r *http.Request) bool {
	for _, v := range strings.Split(r.Header.Get("Upgrade"), ",") {
		if strings.EqualFold(strings.TrimSpace(v), "websocket") {
			return true
		}
	}
	return false
}

// SocketUpgrade reports whether r is a WebSocket upgrade of a socket
// route (Route.Socket): the web core sends those past the Host and Origin
// guards (guard.Bypass).
func (s *API) SocketUpgrade(r *http.Request) bool {
	if !WantsWebSocket(r) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.sockets {
		if p == r.URL.Path {
			return true
		}
	}
	return false
}

// NewBody is an empty body of the route's declared type (a pointer), for
// tests that read every route's body the way admission does.
func (r Route) NewBody() any { return r.newBody() }
