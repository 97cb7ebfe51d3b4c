// Package platform declares the platform routes: demo sessions, developer
// keys, the signing key, receipts and record verification.
package platform

import (
	"log/slog"
	"net/http"

	"boxd/configs"
	"boxd/internal/receipts"
	"boxd/web/api"

	"boxd/engine/attest"
	"boxd/internal/platform"
	"boxd/internal/problem"
	"boxd/internal/records"
	"boxd/pipelines/docreader"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/retrieval"
)

// Body limits of the platform routes.
const (
	smallBody = 4 << 10  // POST /demo/session
	keyBody   = 16 << 10 // POST /v1/keys
)

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log      *slog.Logger
	Config   *configs.Config
	Platform *platform.Platform
	Key      *attest.Key
	Receipts *receipts.Book
}

type routes struct {
	api      *api.API
	log      *slog.Logger
	cfg      *configs.Config
	platform *platform.Platform
	key      *attest.Key
	receipts *receipts.Book
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, cfg: d.Config, platform: d.Platform, key: d.Key, receipts: d.Receipts}
	s.platformRoutes()
}

func (s *routes) platformRoutes() {
	api.Declare(s.api, api.Declared[sessionBody]{
		Route: api.Route{Method: http.MethodPost, Path: "/demo/session", Body: smallBody, Example: `{"vertical": "clinical"}`},
		Serve: s.createSession,
	})
	api.Declare(s.api, api.Declared[platform.KeySpec]{
		Route: api.Route{Method: http.MethodPost, Path: "/v1/keys", Auth: api.Admin, Body: keyBody, BodyOptional: true, Example: `{"label": "clinic app"}`},
		Serve: s.createKey,
	})
	api.Declare(s.api, api.Declared[struct{}]{Route: api.Route{Method: http.MethodGet, Path: "/v1/keys/{key_id}", Auth: api.Admin}, Serve: s.getKey})
	api.Declare(s.api, api.Declared[struct{}]{Route: api.Route{Method: http.MethodGet, Path: "/v1/keys/self", Auth: api.Bearer}, Serve: s.getOwnKey})
	api.Declare(s.api, api.Declared[struct{}]{Route: api.Route{Method: http.MethodDelete, Path: "/v1/keys/{key_id}", Auth: api.Admin}, Serve: s.revokeKey})
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/attest/signing-key"}, s.signingKey)
	s.api.Handle(api.Route{Method: http.MethodGet, Path: "/receipts/{id}"}, s.getReceipt)
	api.Declare(s.api, api.Declared[records.VerifyBody]{
		Route: api.Route{Gate: s.api.Verifications.Named("record verifications"), Method: http.MethodPost, Path: "/record/verify", Body: records.VerifyBodyLimit, Example: `{"record": {}}`},
		Serve: s.verifyRecord,
	})
}

// sessionBody is the body of POST /demo/session.
type sessionBody struct {
	Vertical *string `json:"vertical"`
}

// DemoSession is the response of POST /demo/session.
type DemoSession struct {
	Token     string     `json:"token"`
	ExpiresAt int64      `json:"expires_at"`
	Budget    DemoBudget `json:"budget"`
}

// DemoBudget is a demo session's budget.
type DemoBudget struct {
	SecondsAudio int64 `json:"seconds_audio"`
	LLMTokens    int64 `json:"llm_tokens"`
}

func (s *routes) createSession(a *api.Admitted, body *sessionBody) {
	w, r := a.W, a.R
	if body.Vertical == nil || *body.Vertical == "" {
		api.WriteProblem(w, problem.New(problem.Invalid, "%s", "vertical is required: send {\"vertical\": \"clinical\"} (or another vertical id)"))
		return
	}
	token, sess, d := s.platform.CreateSession(*body.Vertical, r.RemoteAddr)
	if d != nil {
		api.WriteProblem(w, d)
		return
	}
	secs, tokens := sess.Budget()
	s.log.Info("demo session created", "session", sess.ID, "vertical", sess.Vertical)
	w.Header().Set("Cache-Control", "no-store")
	api.WriteJSON(w, http.StatusOK, DemoSession{
		Token: token, ExpiresAt: sess.Expires.Unix(),
		Budget: DemoBudget{SecondsAudio: secs, LLMTokens: tokens},
	})
}

func (s *routes) createKey(a *api.Admitted, spec *platform.KeySpec) {
	w, r := a.W, a.R
	secret, k, d := s.platform.CreateKey(r.Context(), *spec)
	if d != nil {
		api.WriteProblem(w, d)
		return
	}
	s.log.Info("developer key created", "key_id", k.ID, "plan", k.Plan)
	w.Header().Set("Cache-Control", "no-store")
	api.WriteJSON(w, http.StatusCreated, platform.KeyCreated{
		Key: secret, KeyID: k.ID, Created: k.Created.Unix(), Label: k.Label, Plan: k.Plan, Limits: platform.ViewLimits(k.Limits),
	})
}

func (s *routes) getKey(a *api.Admitted, _ *struct{}) {
	w, r := a.W, a.R
	rec, d := s.platform.KeyRecord(r.Context(), r.PathValue("key_id"))
	if d != nil {
		api.WriteProblem(w, d)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	api.WriteJSON(w, http.StatusOK, rec)
}

// getOwnKey is GET /v1/keys/self: a developer key reads its own record
// (limits, today's use, 30 days of history), as the admin reads any key's
// at /v1/keys/{key_id}; an app watches its own budget without the admin
// secret.
func (s *routes) getOwnKey(a *api.Admitted, _ *struct{}) {
	w, r, pr := a.W, a.R, a.Principal
	if !pr.IsKey() {
		api.WriteProblem(w, problem.New(problem.Forbidden, "GET /v1/keys/self reads a developer key's own limits and use; a demo session token is not a key (its budget shows in each answer's usage, and 402 says when it is spent)"))
		return
	}
	rec, d := s.platform.KeyRecord(r.Context(), *pr.KeyID())
	if d != nil {
		api.WriteProblem(w, d)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	api.WriteJSON(w, http.StatusOK, rec)
}

func (s *routes) revokeKey(a *api.Admitted, _ *struct{}) {
	w, r := a.W, a.R
	k, d := s.platform.RevokeKey(r.Context(), r.PathValue("key_id"))
	if d != nil {
		api.WriteProblem(w, d)
		return
	}
	s.log.Info("developer key revoked", "key_id", k.ID)
	api.WriteJSON(w, http.StatusOK, map[string]any{"key_id": k.ID, "revoked": true})
}

// SigningKey is GET /attest/signing-key.
type SigningKey struct {
	Scheme    string   `json:"scheme"`
	PubKey    string   `json:"pubkey"`
	KeyID     string   `json:"key_id"`
	Formats   []string `json:"formats"`
	Canonical string   `json:"canonical"`
}

// canonicalRule says how signed messages are formed (README, "Signed
// formats", gives each format's bytes).
const canonicalRule = "message = format id + \"\\n\" + the signed object's canonical JSON: keys sorted by UTF-8 bytes, separators \",\" and \":\" without spaces, UTF-8 with non-ASCII and <, >, & not escaped (only \\\", \\\\ and control characters are); numbers as the box wrote them: service.record.v1 and service.model-call.v1 carry every number as a string, the search, document and chart receipts carry integers (and the document's deskew a decimal); signatures are hex Ed25519 (RFC 8032) by pubkey; README \"Signed formats\" lists each format's signed object"

// SignedFormats are every format the box signs with its key.
var SignedFormats = []string{attest.RecordFormat, attest.ModelCallFormat, retrieval.SearchFormat, docreader.ReceiptFormat, chart.ReceiptFormat}

func (s *routes) signingKey(w http.ResponseWriter, r *http.Request) {
	api.WriteJSON(w, http.StatusOK, SigningKey{
		Scheme: attest.Scheme, PubKey: s.key.PublicKeyHex(), KeyID: s.key.ID(),
		Formats:   SignedFormats,
		Canonical: canonicalRule,
	})
}

func (s *routes) verifyRecord(a *api.Admitted, body *records.VerifyBody) {
	raw, err := body.Raw()
	if err != nil {
		api.WriteProblem(a.W, err)
		return
	}
	api.WriteJSON(a.W, http.StatusOK, records.CheckOf(records.Verify(raw, s.key.PublicKey())))
}
