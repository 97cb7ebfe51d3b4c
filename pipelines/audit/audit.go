// Package audit is the endpoint audit (contract document 2, vertical
// auditor): it checks whether an OpenAI-compatible chat endpoint serves
// the model it claims by sending a versioned probe suite (suite.go) —
// greedy goldens and canaries compared token for token and logprob for
// logprob with a signed reference fixture of the claimed weights
// (fixture.go), quality tasks scored in code (quality.go), performance
// and an optional context probe — and signs a report with a verdict
// (pass, drift, fail, inconclusive; compare.go holds the statistics).
// Drift and fail are signed only after a second pass with a fresh seed
// agrees.
//
// Targets are the box's own chat model (through llmcall: receipts,
// budget) and the endpoints the operator registers, or any https /v1 URL
// a caller names; a provider key is held in memory for the run only.
package audit

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/internal/store"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/outbound"
)

// MaxContextTokens bounds context_tokens (contract section 8).
const MaxContextTokens = 32000

// Secret is a provider key: it never prints, logs or marshals.
type Secret string

// String hides the key.
func (Secret) String() string { return "[provider key]" }

// LogValue hides the key from slog.
func (Secret) LogValue() slog.Value { return slog.StringValue("[provider key]") }

// MarshalJSON hides the key.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[provider key]"`), nil }

// GoString hides the key from %#v.
func (Secret) GoString() string { return "[provider key]" }

// Request is POST /audit/runs' body: a demo target, or an endpoint.
type Request struct {
	Target        string `json:"target"`
	BaseURL       string `json:"base_url"`
	Model         string `json:"model"`
	ClaimedModel  string `json:"claimed_model"`
	APIKey        Secret `json:"api_key"`
	ContextTokens *int   `json:"context_tokens"`
}

// Streaming: an audit always answers server-sent events.
func (Request) Streaming() bool { return true }

// Target is a demo endpoint the box offers (GET /audit/targets).
type Target struct {
	ID           string `json:"id"`
	Label        string `json:"label"`
	ClaimedModel string `json:"claimed_model"`
	Kind         string `json:"kind"` // box (this box's chat model) or endpoint (registered by the operator)
	Note         string `json:"note"`
	// Expect is the verdict the target should get ("" when not known).
	Expect    string `json:"expect"`
	Available bool   `json:"available"`

	baseURL, model string
}

// Registered is a target the operator lists in audit.targets.
type Registered struct {
	ID, Label, BaseURL, Model, ClaimedModel, Expect, Note string
}

// BoxTarget is the id of the box's own chat model as a target.
const BoxTarget = "box-chat"

// Keeper keeps signed reports (the platform store's reports table).
type Keeper interface {
	Put(ctx context.Context, t store.Table, k store.Kept) error
	Get(ctx context.Context, t store.Table, id, owner string, now time.Time) (store.Kept, error)
}

// Service runs audits.
type Service struct {
	Key  *attest.Key
	Chat *llmcall.Model // the box's chat model (target box-chat)
	Refs *References
	// Poster sends the probes of endpoint targets (the audit's outbound
	// client).
	Poster Poster
	// AllowPrivate (audit.allow_private) lets base_url name plain-http,
	// loopback and private endpoints.
	AllowPrivate bool
	Resolver     *net.Resolver
	Registered   []Registered
	Reports      Keeper
	Suite        *Suite
	Now          func() time.Time
	Log          *slog.Logger
	// Software names this auditor in reports.
	Software string
	// KeepReports is how long reports are kept (0: 90 days).
	KeepReports time.Duration
	// ProbeTimeout bounds one probe request (0: 90 s; the context probe
	// gets five times as long).
	ProbeTimeout time.Duration
	// RunTimeout bounds an audit's probing (0: 20 minutes); probes not
	// sent by then count as failed.
	RunTimeout time.Duration

	mu     sync.Mutex
	recent []ReportListing
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) suite() *Suite {
	if s.Suite == nil {
		s.Suite = DefaultSuite()
	}
	return s.Suite
}

// Targets lists the demo targets: the box's chat model, then the
// operator's.
func (s *Service) Targets() []Target {
	out := []Target{}
	if s.Chat != nil {
		t := Target{ID: BoxTarget, Label: "This box's chat model", ClaimedModel: s.Chat.ModelID, Kind: "box", Expect: VerdictPass,
			Note: "the box audits its own chat model through its engine; probes are receipted and spend the caller's token budget"}
		t.Available = s.Chat.Ready() && s.Refs != nil && s.Refs.Find(s.Chat.ModelID) != nil
		switch {
		case !s.Chat.Ready():
			t.Note = "no chat model is loaded (models.llm.path)"
		case !t.Available:
			t.Note = "no reference fixture yet: it is recorded at start (boxd audit record writes one)"
		}
		out = append(out, t)
	}
	for _, r := range s.Registered {
		claimed := r.ClaimedModel
		if claimed == "" {
			claimed = r.Model
		}
		out = append(out, Target{ID: r.ID, Label: r.Label, ClaimedModel: claimed, Kind: "endpoint", Expect: r.Expect, Note: r.Note,
			Available: s.Poster != nil, baseURL: r.BaseURL, model: r.Model})
	}
	return out
}

func (s *Service) target(id string) (Target, bool) {
	for _, t := range s.Targets() {
		if t.ID == id {
			return t, true
		}
	}
	return Target{}, false
}

// Validate checks a request's fields (400 naming what to fix); Check
// then checks the endpoint's address.
func (s *Service) Validate(r *Request) error {
	bad := func(f string, a ...any) error { return problem.New(problem.Invalid, f, a...) }
	if r.ContextTokens != nil && (*r.ContextTokens < 0 || *r.ContextTokens > MaxContextTokens) {
		return bad("context_tokens is %d; send an integer from 0 to %d", *r.ContextTokens, MaxContextTokens)
	}
	if len(r.ClaimedModel) > 200 {
		return bad("claimed_model is longer than 200 characters")
	}
	switch {
	case r.Target != "" && r.BaseURL != "":
		return bad("send either target (a demo target id) or base_url with model, not both")
	case r.Target != "":
		if r.Model != "" || r.APIKey != "" {
			return bad("a demo target takes no model or api_key; send {\"target\": %q} alone (GET /audit/targets lists them)", r.Target)
		}
		if _, ok := s.target(r.Target); !ok {
			return problem.New(problem.NotFound, "no demo target %q; GET /audit/targets lists them", r.Target)
		}
		return nil // availability is the run's (503 after the budget's 402)
	case r.BaseURL == "":
		return bad("send target (a demo target id, GET /audit/targets) or base_url (an https URL ending /v1) with model")
	}
	if r.Model == "" || len(r.Model) > 200 {
		return bad("model is required with base_url: the model's name on that endpoint (at most 200 characters)")
	}
	if len(r.APIKey) > 4096 || strings.ContainsAny(string(r.APIKey), "\r\n") {
		return bad("api_key must be one line of at most 4096 characters")
	}
	u, err := url.Parse(r.BaseURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return bad("base_url %q is not a URL; send an https URL ending /v1, e.g. https://api.example.com/v1", r.BaseURL)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad("base_url %q has port %s; a port is 1 to 65535", r.BaseURL, port)
		}
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return bad("base_url must carry no user name, password, query or fragment; send the key as api_key")
	}
	if strings.TrimRight(u.Path, "/") == "" || !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1") {
		return bad("base_url %q must end /v1 (the OpenAI-compatible root, e.g. https://api.example.com/v1)", r.BaseURL)
	}
	if u.Scheme == "http" && !s.AllowPrivate {
		return bad("base_url %q is plain http: audits reach only https endpoints (the operator can allow plain-http and private endpoints with audit.allow_private)", r.BaseURL)
	}
	return nil
}

// CheckAddress resolves the base_url's host and refuses private,
// loopback and link-local addresses (unless allowed) and hosts that do
// not resolve: 400 naming the host and why. The probes' client checks
// the address it dials again.
func (s *Service) CheckAddress(ctx context.Context, r *Request) error {
	if r.BaseURL == "" {
		return nil
	}
	u, _ := url.Parse(r.BaseURL)
	host := u.Hostname()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		res := s.Resolver
		if res == nil {
			res = net.DefaultResolver
		}
		addrs, err = res.LookupNetIP(ctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			return problem.New(problem.Invalid, "base_url's host %s does not resolve; check the name (the box looks it up from its own network)", host)
		}
	}
	if s.AllowPrivate {
		return nil
	}
	for _, a := range addrs {
		if why := outbound.NonPublic(a.Unmap()); why != "" {
			return problem.New(problem.Invalid, "base_url's host %s is %s (%s): audits reach only public https endpoints (the operator can allow private endpoints with audit.allow_private)", host, why, a)
		}
	}
	return nil
}

// References lists the fixtures this box holds.
func (s *Service) References() []ReferenceListing {
	if s.Refs == nil {
		return []ReferenceListing{}
	}
	return s.Refs.List()
}

// ReportListing is a recent report of a demo target (GET /audit/reports).
type ReportListing struct {
	ID        string `json:"id"`
	Target    string `json:"target"`
	Verdict   string `json:"verdict"`
	CreatedAt string `json:"created_at"`
	ReportURL string `json:"report_url"`
}

// Recent lists the latest reports of demo targets, newest first.
func (s *Service) Recent() []ReportListing {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ReportListing, 0, len(s.recent))
	for i := len(s.recent) - 1; i >= 0; i-- {
		out = append(out, s.recent[i])
	}
	return out
}

func (s *Service) remember(l ReportListing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent = append(s.recent, l)
	if len(s.recent) > 50 {
		s.recent = s.recent[len(s.recent)-50:]
	}
}

// Report reads a kept report (404 when there is none).
func (s *Service) Report(ctx context.Context, id string) ([]byte, error) {
	if s.Reports == nil {
		return nil, problem.New(problem.NotFound, "no audit report %q", id)
	}
	k, err := s.Reports.Get(ctx, store.Reports, id, "", s.now())
	if err != nil || k.Family != family {
		return nil, problem.New(problem.NotFound, "no audit report %q (reports are kept %s)", id, s.keep())
	}
	return k.Body, nil
}

const family = "audit"

func (s *Service) keep() time.Duration {
	if s.KeepReports > 0 {
		return s.KeepReports
	}
	return 90 * 24 * time.Hour
}

// ReportURL is a report's path on this box.
func ReportURL(id string) string { return fmt.Sprintf("/audit/reports/%s", id) }
