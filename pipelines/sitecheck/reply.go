package sitecheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"boxd/internal/run"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/sitecheck/replyguard"
)

// DefaultReplyTokens bounds one drafted reply.
const DefaultReplyTokens = 300

// Sources of a drafted reply.
const (
	SourceDraft     = "draft"
	SourceRedraft   = "redraft"
	SourceSafeReply = "safe_reply"
)

// Drafter writes review replies with the chat model under the reply guard.
type Drafter struct {
	Chat *llmcall.Model
	// MaxTokens bounds each call (0: DefaultReplyTokens).
	MaxTokens int
}

// ReplyRequest is what POST /reviews/reply drafts for (the fields of
// /reviews/check without the reply).
type ReplyRequest struct {
	Review       string
	Rating       int
	BusinessName string
	BusinessType string
}

// Attempt is one model call and the guard's verdict on its text.
type Attempt struct {
	Kind         string            `json:"kind"` // draft or redraft
	Text         string            `json:"text"`
	Check        replyguard.Result `json:"check"`
	FinishReason string            `json:"finish_reason"`
	Usage        llmcall.Usage     `json:"usage"`
	Receipt      llmcall.Receipt   `json:"receipt"`
}

// ReplyResult is the answer of POST /reviews/reply: the reply to post, where
// it came from (draft, redraft or safe_reply), the guard's verdict on it,
// every model call with its receipt, and the tokens used in all.
type ReplyResult struct {
	Reply      string            `json:"reply"`
	Source     string            `json:"source"`
	OK         bool              `json:"ok"`
	Healthcare bool              `json:"healthcare"`
	Check      replyguard.Result `json:"check"`
	Attempts   []Attempt         `json:"attempts"`
	Receipts   []llmcall.Receipt `json:"receipts"`
	Usage      llmcall.Usage     `json:"usage"`
	// RedraftError says why a redraft could not be made (the budget ran
	// out, the model failed); the safe reply is used then.
	RedraftError string `json:"redraft_error,omitempty"`
}

// ErrNotEnglish is returned for a review the guard cannot check.
var ErrNotEnglish = errors.New("the review is not in English; the reply guard checks English only, so no reply is drafted")

// Draft drafts a reply: the model's draft if the guard passes it, else one
// redraft told which phrases were blocked, else the fixed safe reply. budget
// pays for each call; an error before any draft (budget, model) is
// returned as it is.
func (d *Drafter) Draft(ctx context.Context, req ReplyRequest, budget run.Budget) (*ReplyResult, error) {
	hc := replyguard.IsHealthcare(req.BusinessName, req.BusinessType)
	safe := replyguard.SafeReply(req.BusinessName, hc)
	pre := replyguard.Check(replyguard.Input{Review: req.Review, Rating: req.Rating, BusinessName: req.BusinessName,
		BusinessType: req.BusinessType, Reply: safe})
	for _, p := range pre.Problems {
		if p.Code == replyguard.CodeNonEnglish {
			return nil, ErrNotEnglish
		}
	}
	res := &ReplyResult{Healthcare: hc, Attempts: []Attempt{}, Receipts: []llmcall.Receipt{}}
	msgs := []llmcall.Message{
		{Role: "system", Content: systemPrompt(hc)},
		{Role: "user", Content: userPrompt(req)},
	}
	draft, err := d.call(ctx, msgs, budget, SourceDraft, req)
	if err != nil {
		return nil, err
	}
	res.add(draft)
	if draft.Check.OK {
		return res.finish(draft.Text, SourceDraft, draft.Check), nil
	}
	msgs = append(msgs,
		llmcall.Message{Role: "assistant", Content: draft.Text},
		llmcall.Message{Role: "user", Content: redraftPrompt(draft.Check)})
	redraft, err := d.call(ctx, msgs, budget, SourceRedraft, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		res.RedraftError = err.Error()
	} else {
		res.add(redraft)
		if redraft.Check.OK {
			return res.finish(redraft.Text, SourceRedraft, redraft.Check), nil
		}
	}
	return res.finish(safe, SourceSafeReply, pre), nil
}

func (r *ReplyResult) add(a Attempt) {
	r.Attempts = append(r.Attempts, a)
	r.Receipts = append(r.Receipts, a.Receipt)
	r.Usage.PromptTokens += a.Usage.PromptTokens
	r.Usage.CompletionTokens += a.Usage.CompletionTokens
	r.Usage.TotalTokens += a.Usage.TotalTokens
}

func (r *ReplyResult) finish(text, source string, check replyguard.Result) *ReplyResult {
	r.Reply, r.Source, r.Check, r.OK = text, source, check, check.OK
	return r
}

// call runs one completion and checks its text.
func (d *Drafter) call(ctx context.Context, msgs []llmcall.Message, budget run.Budget, kind string, req ReplyRequest) (Attempt, error) {
	maxTok := d.MaxTokens
	if maxTok <= 0 {
		maxTok = DefaultReplyTokens
	}
	out, err := d.Chat.Text(ctx, budget, llmcall.Request{Messages: msgs, Sampling: llmcall.Temperature(0.7), MaxTokens: maxTok})
	if err != nil {
		return Attempt{}, err
	}
	text := cleanDraft(out.Text)
	check := checkDraft(text, req)
	return Attempt{Kind: kind, Text: text, Check: check, FinishReason: out.FinishReason, Usage: out.Usage, Receipt: *out.Receipt}, nil
}

// CodeUnreadable marks a model's draft that is not readable text: it holds
// U+FFFD (bytes the model produced that are not UTF-8: a character cut
// between tokens) or no letter at all. The drafting job adds it to the
// guard's check of the draft; the guard itself, which checks what a person
// wrote, never does.
const CodeUnreadable = "unreadable"

const msgUnreadable = "is not readable text (a broken character, or no words); write the reply in plain English sentences"

// checkDraft is the guard's check of a draft, plus the drafting job's own
// rule: a draft must be readable (CodeUnreadable, a block).
func checkDraft(text string, req ReplyRequest) replyguard.Result {
	check := replyguard.Check(replyguard.Input{Review: req.Review, Rating: req.Rating, BusinessName: req.BusinessName,
		BusinessType: req.BusinessType, Reply: text})
	if text == "" {
		check.OK = false
		return check
	}
	letters := strings.IndexFunc(text, unicode.IsLetter) >= 0
	if bad := strings.IndexRune(text, utf8.RuneError); bad >= 0 || !letters {
		p := replyguard.Problem{Code: CodeUnreadable, Severity: replyguard.SeverityBlock, Message: msgUnreadable}
		if bad >= 0 {
			start := utf8.RuneCountInString(text[:bad])
			p.Phrase, p.Start, p.End = string(utf8.RuneError), start, start+1
			check.Blocked = append(check.Blocked, p.Phrase)
		}
		check.Problems = append(check.Problems, p)
		check.OK = false
	}
	return check
}

// cleanDraft trims a model's reply of whitespace and of quotes around the
// whole text.
func cleanDraft(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"') {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

func systemPrompt(healthcare bool) string {
	var b strings.Builder
	b.WriteString("You write the public reply of a business to an online review. Write in English, two to four sentences, ready to post: no placeholders, no brackets, no signature block.\n")
	b.WriteString("Rules:\n- Thank the reviewer and acknowledge what they said, politely; never argue, blame or contradict them.\n")
	b.WriteString("- Offer nothing: no discounts, refunds, free items, vouchers or compensation.\n")
	b.WriteString("- Give no phone numbers, e-mail addresses, street addresses, web links, prices, dates, times or other numbers.\n")
	b.WriteString("- Invite them to contact the business directly, without giving contact details.\n")
	if healthcare {
		b.WriteString("- This is a health or care business. Confirm nothing about the reviewer: do not say or imply that they are or were a patient or client, that they visited, had an appointment, treatment or procedure, waited, received a bill, or that any family member was involved; mention no names of people at all.\n")
	}
	b.WriteString("Answer with the reply text only.")
	return b.String()
}

func userPrompt(req ReplyRequest) string {
	t := req.BusinessType
	if t == "" {
		t = "business"
	}
	return fmt.Sprintf("Business: %s (%s)\nRating: %d of 5 stars\nReview:\n%s", req.BusinessName, t, req.Rating, req.Review)
}

// redraftPrompt names the blocked phrases and why they were blocked.
func redraftPrompt(c replyguard.Result) string {
	var b strings.Builder
	b.WriteString("That reply cannot be posted. The guard blocked it for:\n")
	for _, p := range c.Problems {
		if p.Severity != replyguard.SeverityBlock {
			continue
		}
		if p.Phrase != "" {
			fmt.Fprintf(&b, "- %q: %s\n", p.Phrase, p.Message)
		} else {
			fmt.Fprintf(&b, "- %s\n", p.Message)
		}
	}
	b.WriteString("Write a new reply that uses none of these words or anything like them and follows every rule. Answer with the reply text only.")
	return b.String()
}
