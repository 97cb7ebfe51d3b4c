package web

import (
	"bytes"
	"encoding/json"
	"net/http"

	"boxd/engine/attest"
	"boxd/internal/platform"
	"boxd/internal/problem"
	"boxd/internal/records"
	"boxd/pipelines/docreader"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/retrieval"
)

func (s *Server) platformRoutes() {
	declare(s, Declared[sessionBody]{
		Route: Route{Method: http.MethodPost, Path: "/demo/session", Body: smallBody, Example: `{"vertical": "clinical"}`},
		Serve: s.createSession,
	})
	declare(s, Declared[platform.KeySpec]{
		Route: Route{Method: http.MethodPost, Path: "/v1/keys", Auth: Admin, Body: keyBody, BodyOptional: true, Example: `{"label": "clinic app"}`},
		Serve: s.createKey,
	})
	declare(s, Declared[struct{}]{Route: Route{Method: http.MethodGet, Path: "/v1/keys/{key_id}", Auth: Admin}, Serve: s.getKey})
	declare(s, Declared[struct{}]{Route: Route{Method: http.MethodGet, Path: "/v1/keys/self", Auth: Bearer}, Serve: s.getOwnKey})
	declare(s, Declared[struct{}]{Route: Route{Method: http.MethodDelete, Path: "/v1/keys/{key_id}", Auth: Admin}, Serve: s.revokeKey})
	s.Handle(http.MethodGet, "/attest/signing-key", s.signingKey)
	s.Handle(http.MethodGet, "/receipts/{id}", s.getReceipt)
	declareGated(s, s.bounds.verify, "record verifications", Declared[verifyBody]{
		Route: Route{Method: http.MethodPost, Path: "/record/verify", Body: recordBody, Example: `{"record": {}}`},
		Serve: s.verifyRecord,
	})
}

// sessionBody is the body of POST /demo/session.
type sessionBody struct {
	Vertical *string `json:"vertical"`
}

// verifyBody is the body of POST /record/verify.
type verifyBody struct {
	Record json.RawMessage `json:"record"`
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

func (s *Server) createSession(a *Admitted, body *sessionBody) {
	w, r := a.W, a.R
	if body.Vertical == nil || *body.Vertical == "" {
		writeProblem(w, problem.New(problem.Invalid, "%s", "vertical is required: send {\"vertical\": \"clinical\"} (or another vertical id)"))
		return
	}
	token, sess, d := s.platform.CreateSession(*body.Vertical, r.RemoteAddr)
	if d != nil {
		writeProblem(w, d)
		return
	}
	secs, tokens := sess.Budget()
	s.log.Info("demo session created", "session", sess.ID, "vertical", sess.Vertical)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, DemoSession{
		Token: token, ExpiresAt: sess.Expires.Unix(),
		Budget: DemoBudget{SecondsAudio: secs, LLMTokens: tokens},
	})
}

// KeyCreated is the response of POST /v1/keys: the only time the key is
// shown.
type KeyCreated struct {
	Key     string              `json:"key"`
	KeyID   string              `json:"key_id"`
	Created int64               `json:"created"`
	Label   string              `json:"label"`
	Plan    string              `json:"plan"`
	Limits  platform.LimitsView `json:"limits"`
}

func (s *Server) createKey(a *Admitted, spec *platform.KeySpec) {
	w, r := a.W, a.R
	secret, k, d := s.platform.CreateKey(r.Context(), *spec)
	if d != nil {
		writeProblem(w, d)
		return
	}
	s.log.Info("developer key created", "key_id", k.ID, "plan", k.Plan)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, KeyCreated{
		Key: secret, KeyID: k.ID, Created: k.Created.Unix(), Label: k.Label, Plan: k.Plan, Limits: platform.ViewLimits(k.Limits),
	})
}

func (s *Server) getKey(a *Admitted, _ *struct{}) {
	w, r := a.W, a.R
	rec, d := s.platform.KeyRecord(r.Context(), r.PathValue("key_id"))
	if d != nil {
		writeProblem(w, d)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, rec)
}

// getOwnKey is GET /v1/keys/self: a developer key reads its own record
// (limits, today's use, 30 days of history), as the admin reads any key's
// at /v1/keys/{key_id}; an app watches its own budget without the admin
// secret.
func (s *Server) getOwnKey(a *Admitted, _ *struct{}) {
	w, r, pr := a.W, a.R, a.Principal
	if !pr.IsKey() {
		writeProblem(w, problem.New(problem.Forbidden, "GET /v1/keys/self reads a developer key's own limits and use; a demo session token is not a key (its budget shows in each answer's usage, and 402 says when it is spent)"))
		return
	}
	rec, d := s.platform.KeyRecord(r.Context(), *pr.KeyID())
	if d != nil {
		writeProblem(w, d)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, rec)
}

func (s *Server) revokeKey(a *Admitted, _ *struct{}) {
	w, r := a.W, a.R
	k, d := s.platform.RevokeKey(r.Context(), r.PathValue("key_id"))
	if d != nil {
		writeProblem(w, d)
		return
	}
	s.log.Info("developer key revoked", "key_id", k.ID)
	writeJSON(w, http.StatusOK, map[string]any{"key_id": k.ID, "revoked": true})
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

func (s *Server) signingKey(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, SigningKey{
		Scheme: attest.Scheme, PubKey: s.key.PublicKeyHex(), KeyID: s.key.ID(),
		Formats:   SignedFormats,
		Canonical: canonicalRule,
	})
}

// RecordCheck is the response of POST /record/verify.
type RecordCheck struct {
	OK              bool           `json:"ok"`
	Checks          []attest.Check `json:"checks"`
	Entries         int            `json:"entries"`
	FirstBadEntry   *int           `json:"first_bad_entry"`
	Signer          *attest.Signer `json:"signer"`
	SignedByThisBox bool           `json:"signed_by_this_box"`
	Problem         string         `json:"problem,omitempty"`
}

func (s *Server) verifyRecord(a *Admitted, body *verifyBody) {
	raw, err := recordOf(body)
	if err != nil {
		writeProblem(a.W, err)
		return
	}
	writeJSON(a.W, http.StatusOK, checkOf(records.Verify(raw, s.key.PublicKey())))
}

// recordOf is the record a verify body holds: an object, or a JSON string
// of one (an exported file's text).
func recordOf(body *verifyBody) ([]byte, *problem.Error) {
	raw := bytes.TrimSpace(body.Record)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, problem.New(problem.Invalid, "%s", "record is required: send {\"record\": <the signed record object>}")
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, problem.New(problem.Invalid, "%s", "record: "+err.Error())
		}
		raw, body.Record = []byte(text), nil // one copy of the record in memory, not two
	}
	return raw, nil
}

// checkOf is a verification as the verify routes answer it.
func checkOf(v attest.Verification) RecordCheck {
	return RecordCheck{OK: v.OK, Checks: v.Checks, Entries: v.Entries, FirstBadEntry: v.FirstBadEntry,
		Signer: v.Signer, SignedByThisBox: v.SignedByTrustedKey, Problem: v.Problem}
}

// principal resolves the caller of a route of vertical ("" for any) from
// the bearer token, writing the refusal when there is one.
func (s *Server) principal(w http.ResponseWriter, r *http.Request, vertical string) *platform.Principal {
	token, ok := bearer(r)
	if !ok {
		writeProblem(w, problem.New(problem.Unauthorized, "%s", "the Authorization header must be Bearer <demo session token or dk_ developer key>"))
		return nil
	}
	pr, d := s.platform.Authenticate(r.Context(), token, vertical)
	if d != nil {
		writeProblem(w, d)
		return nil
	}
	return pr
}
