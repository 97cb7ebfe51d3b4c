package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"boxd/pipelines/chat"
	"boxd/pipelines/sitecheck"
	"boxd/pipelines/sitecheck/replyguard"
)

// Body limits and verticals of the site-check routes.
const (
	siteCheckBody    = 8 << 10  // {domain, name?}
	reviewBody       = 64 << 10 // {review, rating, business_name, business_type?, reply}
	siteCheckVert    = "geo-audit"
	reviewReplyVert  = "review-reply"
	maxReviewChars   = 10000
	maxBusinessChars = 200
)

func (s *Server) siteCheckRoutes() {
	s.Handle(http.MethodPost, "/geo/site-check", s.siteCheck)
	s.Handle(http.MethodPost, "/reviews/check", s.reviewCheck)
	s.Handle(http.MethodPost, "/reviews/reply", s.reviewReply)
}

// siteCheck answers POST /geo/site-check. One run at a time per demo token
// (409); no model call, so no budget is charged.
func (s *Server) siteCheck(w http.ResponseWriter, r *http.Request) {
	pr := s.principal(w, r, siteCheckVert)
	if pr == nil {
		return
	}
	var req sitecheck.Request
	if e := decodeJSON(w, r, siteCheckBody, &req); e != nil {
		writeHTTPError(w, e)
		return
	}
	if s.sitecheck == nil {
		writeError(w, http.StatusServiceUnavailable, "site checks are off: "+s.outboundErr.Error())
		return
	}
	unlock, d := pr.Lock()
	if d != nil {
		writeDenial(w, d)
		return
	}
	defer unlock()
	rep, err := s.sitecheck.Run(r.Context(), req)
	if err != nil {
		var ie *sitecheck.InputError
		var fe *sitecheck.FetchError
		switch {
		case errors.As(err, &ie):
			writeError(w, http.StatusBadRequest, ie.Msg)
		case errors.As(err, &fe):
			s.log.Info("site check failed", "caller", pr.LogID(), "kind", fe.Kind, "status", fe.Status)
			writeError(w, fe.Status, fe.Msg)
		case r.Context().Err() != nil:
		default:
			writeError(w, http.StatusInternalServerError, err.Error())
		}
		return
	}
	s.log.Info("site check", "id", rep.ID, "caller", pr.LogID(), "errors", rep.Summary.Errors, "warnings", rep.Summary.Warnings)
	writeJSON(w, http.StatusOK, rep)
}

// reviewFields decodes a review body through the reply guard's own input
// rules (so the route and the kits refuse the same inputs with the same
// words) and bounds its text fields.
func reviewFields(w http.ResponseWriter, r *http.Request, withReply bool) (json.RawMessage, *httpError) {
	var raw json.RawMessage
	if e := decodeOpenAI(w, r, reviewBody, &raw); e != nil {
		return nil, e
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, badRequest("body must be a JSON object with the fields review, rating, business_name, business_type and reply")
	}
	if !withReply {
		if _, ok := m["reply"]; ok {
			return nil, badRequest("unknown field \"reply\"; /reviews/reply drafts the reply (send review, rating, business_name and business_type)")
		}
		m["reply"] = json.RawMessage(`""`)
	}
	for _, f := range []struct {
		name string
		max  int
	}{{"review", maxReviewChars}, {"reply", maxReviewChars}, {"business_name", maxBusinessChars}, {"business_type", maxBusinessChars}} {
		var v string
		if json.Unmarshal(m[f.name], &v) == nil && len([]rune(v)) > f.max {
			return nil, &httpError{status: http.StatusRequestEntityTooLarge, msg: f.name + " is longer than " + strconv.Itoa(f.max) + " characters"}
		}
	}
	out, _ := json.Marshal(m)
	return out, nil
}

// guardInput runs the reply guard's input validation (the kits' own
// rules), returning the decoded input or the refusal with the kit's
// message.
func guardInput(raw json.RawMessage) (replyguard.Input, *httpError) {
	in, err := replyguard.DecodeInput(raw)
	if err != nil {
		return replyguard.Input{}, badRequest("%s", strings.TrimPrefix(err.Error(), "checkReply: "))
	}
	return in, nil
}

// reviewCheck answers POST /reviews/check: the guard's verdict, no model
// call.
func (s *Server) reviewCheck(w http.ResponseWriter, r *http.Request) {
	pr := s.principal(w, r, reviewReplyVert)
	if pr == nil {
		return
	}
	raw, e := reviewFields(w, r, true)
	if e != nil {
		writeHTTPError(w, e)
		return
	}
	in, e := guardInput(raw)
	if e != nil {
		writeHTTPError(w, e)
		return
	}
	res := replyguard.Check(in)
	s.log.Info("review check", "caller", pr.LogID(), "ok", res.OK, "problems", len(res.Problems))
	writeJSON(w, http.StatusOK, res)
}

// reviewReply answers POST /reviews/reply: a draft under the guard, a
// redraft naming the blocked phrases, else the fixed safe reply. Each model
// call is receipted and charged to the caller's token budget; one run at a
// time per demo token.
func (s *Server) reviewReply(w http.ResponseWriter, r *http.Request) {
	pr := s.principal(w, r, reviewReplyVert)
	if pr == nil {
		return
	}
	raw, e := reviewFields(w, r, false)
	if e != nil {
		writeHTTPError(w, e)
		return
	}
	in, e := guardInput(raw)
	if e != nil {
		writeHTTPError(w, e)
		return
	}
	unlock, d := pr.Lock()
	if d != nil {
		writeDenial(w, d)
		return
	}
	defer unlock()
	drafter := sitecheck.Drafter{Chat: s.chat, MaxTokens: s.replyTokens}
	res, err := drafter.Draft(r.Context(), sitecheck.ReplyRequest{Review: in.Review, Rating: in.Rating,
		BusinessName: in.BusinessName, BusinessType: in.BusinessType}, budget{pr})
	if err != nil {
		switch {
		case errors.Is(err, sitecheck.ErrNotEnglish):
			writeError(w, http.StatusBadRequest, err.Error())
		case r.Context().Err() != nil:
		default:
			writeChatError(w, err)
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
	writeJSON(w, http.StatusOK, res)
}

var _ chat.Budget = budget{}
