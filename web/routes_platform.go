package web

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"

	"boxd/engine/attest"
	"boxd/web/platform"
)

func (s *Server) platformRoutes() {
	s.Handle(http.MethodPost, "/demo/session", s.createSession)
	s.Handle(http.MethodPost, "/v1/keys", s.admin(s.createKey))
	s.Handle(http.MethodGet, "/v1/keys/{key_id}", s.admin(s.getKey))
	s.Handle(http.MethodDelete, "/v1/keys/{key_id}", s.admin(s.revokeKey))
	s.Handle(http.MethodGet, "/attest/signing-key", s.signingKey)
	s.Handle(http.MethodGet, "/receipts/{id}", s.getReceipt)
	s.Handle(http.MethodPost, "/record/verify", s.verifyRecord)
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

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Vertical *string `json:"vertical"`
	}
	if e := decodeJSON(w, r, smallBody, &body); e != nil {
		writeHTTPError(w, e)
		return
	}
	if body.Vertical == nil || *body.Vertical == "" {
		writeError(w, http.StatusBadRequest, "vertical is required: send {\"vertical\": \"clinical\"} (or another vertical id)")
		return
	}
	token, sess, d := s.platform.CreateSession(*body.Vertical, r.RemoteAddr)
	if d != nil {
		writeDenial(w, d)
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

// admin guards the key routes: Authorization: Bearer <admin secret>,
// compared in constant time; 503 when no secret is configured, 401 when it
// is missing or wrong, 403 from a browser (these routes are server to
// server).
func (s *Server) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.cfg.AdminSecret.IsSet() {
			writeError(w, http.StatusServiceUnavailable, "no admin secret is configured on this box; set BOXD_ADMIN_SECRET or admin_secret_file and restart boxd")
			return
		}
		if r.Header.Get("Origin") != "" {
			writeError(w, http.StatusForbidden, "admin routes are called server to server, never from a browser")
			return
		}
		token, ok := bearer(r)
		if !ok || token == "" {
			writeError(w, http.StatusUnauthorized, "admin routes need Authorization: Bearer <admin secret>")
			return
		}
		got := sha256.Sum256([]byte(token))
		want := sha256.Sum256([]byte(s.cfg.AdminSecret.Reveal()))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			s.log.Warn("admin secret refused", "route", r.Pattern)
			writeError(w, http.StatusUnauthorized, "wrong admin secret")
			return
		}
		next(w, r)
	}
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

func (s *Server) createKey(w http.ResponseWriter, r *http.Request) {
	var spec platform.KeySpec
	if r.ContentLength != 0 {
		if e := decodeJSON(w, r, keyBody, &spec); e != nil {
			writeHTTPError(w, e)
			return
		}
	}
	secret, k, d := s.platform.CreateKey(r.Context(), spec)
	if d != nil {
		writeDenial(w, d)
		return
	}
	s.log.Info("developer key created", "key_id", k.ID, "plan", k.Plan)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, KeyCreated{
		Key: secret, KeyID: k.ID, Created: k.Created.Unix(), Label: k.Label, Plan: k.Plan, Limits: platform.ViewLimits(k.Limits),
	})
}

func (s *Server) getKey(w http.ResponseWriter, r *http.Request) {
	rec, d := s.platform.KeyRecord(r.Context(), r.PathValue("key_id"))
	if d != nil {
		writeDenial(w, d)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, rec)
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) {
	k, d := s.platform.RevokeKey(r.Context(), r.PathValue("key_id"))
	if d != nil {
		writeDenial(w, d)
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

// canonicalRule says how signed messages are formed.
const canonicalRule = "message = format id + \"\\n\" + JSON with keys sorted by UTF-8 bytes, separators \",\" and \":\" without spaces, non-ASCII not escaped, UTF-8; numbers in signed records are strings; signatures are hex Ed25519"

func (s *Server) signingKey(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, SigningKey{
		Scheme: attest.Scheme, PubKey: s.key.PublicKeyHex(), KeyID: s.key.ID(),
		Formats:   []string{attest.RecordFormat, attest.ModelCallFormat},
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

func (s *Server) verifyRecord(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Record json.RawMessage `json:"record"`
	}
	if e := decodeJSON(w, r, recordBody, &body); e != nil {
		writeHTTPError(w, e)
		return
	}
	raw := bytes.TrimSpace(body.Record)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		writeError(w, http.StatusBadRequest, "record is required: send {\"record\": <the signed record object>}")
		return
	}
	if raw[0] == '"' { // a record passed as a JSON string (an exported file's text)
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			writeError(w, http.StatusBadRequest, "record: "+err.Error())
			return
		}
		raw = []byte(text)
	}
	v := attest.VerifyRecord(raw, s.key.PublicKey())
	writeJSON(w, http.StatusOK, RecordCheck{
		OK: v.OK, Checks: v.Checks, Entries: v.Entries, FirstBadEntry: v.FirstBadEntry,
		Signer: v.Signer, SignedByThisBox: v.SignedByTrustedKey, Problem: v.Problem,
	})
}

// principal resolves the caller of a route of vertical ("" for any) from
// the bearer token, writing the refusal when there is one.
func (s *Server) principal(w http.ResponseWriter, r *http.Request, vertical string) *platform.Principal {
	token, ok := bearer(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "the Authorization header must be Bearer <demo session token or dk_ developer key>")
		return nil
	}
	pr, d := s.platform.Authenticate(r.Context(), token, vertical)
	if d != nil {
		writeDenial(w, d)
		return nil
	}
	return pr
}
