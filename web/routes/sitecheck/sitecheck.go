// Package sitecheck declares the site checks' routes (/sitecheck/run and
// the review reply routes) over pipelines/sitecheck.
package sitecheck

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"boxd/pipelines/chat"
	"boxd/web/api"

	"boxd/internal/problem"

	"boxd/pipelines/sitecheck"
	"boxd/pipelines/sitecheck/replyguard"
)

// Body limits and verticals of the site-check routes.
const (
	siteCheckBody    = 8 << 10  // {domain, name?}
	reviewBodyLimit  = 64 << 10 // {review, rating, business_name, business_type?, reply}
	siteCheckVert    = "geo-audit"
	reviewReplyVert  = "review-reply"
	maxReviewChars   = 10000
	maxBusinessChars = 200
)

// Deps are what the family is served from (built in internal/daemon).
type Deps struct {
	Log  *slog.Logger
	Chat *chat.Service
	// Checker runs site checks; nil when the outbound settings could not be
	// applied (OutboundErr says why).
	Checker     *sitecheck.Checker
	OutboundErr error
	// ReplyTokens is the tokens per drafted review reply (0: the default).
	ReplyTokens int
}

type routes struct {
	api         *api.API
	log         *slog.Logger
	chat        *chat.Service
	sitecheck   *sitecheck.Checker
	outboundErr error
	replyTokens int
}

// Mount declares the family's routes on a.
func Mount(a *api.API, d Deps) {
	s := &routes{api: a, log: d.Log, chat: d.Chat, sitecheck: d.Checker, outboundErr: d.OutboundErr, replyTokens: d.ReplyTokens}
	s.siteCheckRoutes()
}

func (s *routes) siteCheckRoutes() {
	api.Declare(s.api, api.Declared[sitecheck.Request]{
		Route: api.Route{Method: http.MethodPost, Path: "/geo/site-check", Auth: api.Bearer,
			Verticals: []string{siteCheckVert}, Body: siteCheckBody, OneRun: true,
			Example: `{"domain": "example.com"}`},
		Serve: s.siteCheck,
	})
	api.Declare(s.api, api.Declared[reviewBody]{
		Route: api.Route{Method: http.MethodPost, Path: "/reviews/check", Auth: api.Bearer,
			Verticals: []string{reviewReplyVert}, Body: reviewBodyLimit, Lenient: true,
			Example: `{"review": "Great bread.", "rating": 5, "business_name": "Harbor Bakery", "reply": "Thank you!"}`},
		Validate: func(b *reviewBody) error { return b.check(true) },
		Serve:    s.reviewCheck,
	})
	api.Declare(s.api, api.Declared[reviewBody]{
		Route: api.Route{Method: http.MethodPost, Path: "/reviews/reply", Auth: api.Bearer,
			Verticals: []string{reviewReplyVert}, Body: reviewBodyLimit, Lenient: true, OneRun: true,
			Example: `{"review": "Great bread.", "rating": 5, "business_name": "Harbor Bakery"}`},
		Validate: func(b *reviewBody) error { return b.check(false) },
		Serve:    s.reviewReply,
	})
}

// reviewBody is the body of the review routes, read whole and checked
// through the reply guard's own input rules (check).
type reviewBody struct {
	raw json.RawMessage
	in  replyguard.Input
}

// StrictShape gives strictjson the body's keys (strictjson.Shaped).
func (reviewBody) StrictShape() any {
	return struct {
		Review       any `json:"review"`
		Rating       any `json:"rating"`
		BusinessName any `json:"business_name"`
		BusinessType any `json:"business_type"`
		Reply        any `json:"reply"`
	}{}
}

func (b *reviewBody) UnmarshalJSON(data []byte) error {
	b.raw = append(json.RawMessage(nil), data...)
	return nil
}

// check decodes the body through the guard's rules (so the route and the
// kits refuse the same inputs with the same words) and bounds its text
// fields; withReply is set for /reviews/check.
func (b *reviewBody) check(withReply bool) error {
	raw, err := reviewFields(b.raw, withReply)
	if err != nil {
		return err
	}
	in, err := guardInput(raw)
	if err != nil {
		return err
	}
	b.in = in
	return nil
}

// siteCheck answers POST /geo/site-check. One run at a time per demo token
// (409); no model call, so no budget is charged.
func (s *routes) siteCheck(a *api.Admitted, req *sitecheck.Request) {
	w, r, pr := a.W, a.R, a.Principal
	if s.sitecheck == nil {
		api.WriteProblem(w, problem.Wrap(problem.Unavailable, s.outboundErr, "site checks are off: %v", s.outboundErr))
		return
	}
	rep, err := s.sitecheck.Run(r.Context(), *req)
	if err != nil {
		var fe *sitecheck.FetchError
		if errors.As(err, &fe) {
			s.log.Info("site check failed", "caller", pr.LogID(), "kind", fe.Kind)
		}
		if r.Context().Err() == nil {
			api.WriteProblem(w, err)
		}
		return
	}
	s.log.Info("site check", "id", rep.ID, "caller", pr.LogID(), "errors", rep.Summary.Errors, "warnings", rep.Summary.Warnings)
	api.WriteJSON(w, http.StatusOK, rep)
}

// reviewFields decodes a review body through the reply guard's own input
// rules (so the route and the kits refuse the same inputs with the same
// words) and bounds its text fields.
func reviewFields(raw json.RawMessage, withReply bool) (json.RawMessage, *problem.Error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, api.BadRequest("body must be a JSON object with the fields review, rating, business_name, business_type and reply")
	}
	if !withReply {
		if _, ok := m["reply"]; ok {
			return nil, api.BadRequest("unknown field \"reply\"; /reviews/reply drafts the reply (send review, rating, business_name and business_type)")
		}
		m["reply"] = json.RawMessage(`""`)
	}
	for _, f := range []struct {
		name string
		max  int
	}{{"review", maxReviewChars}, {"reply", maxReviewChars}, {"business_name", maxBusinessChars}, {"business_type", maxBusinessChars}} {
		var v string
		if json.Unmarshal(m[f.name], &v) == nil && len([]rune(v)) > f.max {
			return nil, problem.New(problem.TooLarge, "%s is longer than %d characters", f.name, f.max)
		}
	}
	out, _ := json.Marshal(m)
	return out, nil
}

// guardInput runs the reply guard's input validation (the kits' own
// rules), returning the decoded input or the refusal with the kit's
// message.
func guardInput(raw json.RawMessage) (replyguard.Input, *problem.Error) {
	in, err := replyguard.DecodeInput(raw)
	if err != nil {
		return replyguard.Input{}, api.BadRequest("%s", strings.TrimPrefix(err.Error(), "checkReply: "))
	}
	return in, nil
}

// reviewCheck answers POST /reviews/check: the guard's verdict, no model
// call.
func (s *routes) reviewCheck(a *api.Admitted, b *reviewBody) {
	w, pr := a.W, a.Principal
	res := replyguard.Check(b.in)
	s.log.Info("review check", "caller", pr.LogID(), "ok", res.OK, "problems", len(res.Problems))
	api.WriteJSON(w, http.StatusOK, res)
}

// reviewReply answers POST /reviews/reply: a draft under the guard, a
// redraft naming the blocked phrases, else the fixed safe reply. Each model
// call is receipted and charged to the caller's token budget; one run at a
// time per demo token.
func (s *routes) reviewReply(a *api.Admitted, b *reviewBody) {
	w, r, pr, in := a.W, a.R, a.Principal, b.in
	drafter := sitecheck.Drafter{Chat: s.chat, MaxTokens: s.replyTokens}
	res, err := drafter.Draft(r.Context(), sitecheck.ReplyRequest{Review: in.Review, Rating: in.Rating,
		BusinessName: in.BusinessName, BusinessType: in.BusinessType}, api.Budget{Principal: pr})
	if err != nil {
		switch {
		case errors.Is(err, sitecheck.ErrNotEnglish):
			api.WriteProblem(w, problem.New(problem.Invalid, "%s", err.Error()))
		case r.Context().Err() != nil:
		default:
			api.WriteProblem(w, api.ModelFailure(err))
		}
		return
	}
	ids := make([]string, 0, len(res.Receipts))
	for _, rc := range res.Receipts {
		ids = append(ids, rc.ID)
	}
	if len(ids) > 0 {
		w.Header().Set("x-service-receipt", strings.Join(ids, ", "))
	}
	s.log.Info("review reply", "caller", pr.LogID(), "source", res.Source, "calls", len(res.Attempts),
		"completion_tokens", res.Usage.CompletionTokens)
	api.WriteJSON(w, http.StatusOK, res)
}
