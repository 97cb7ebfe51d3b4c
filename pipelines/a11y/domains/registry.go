package domains

import (
	"context"
	"errors"
	"fmt"
	"time"

	"boxd/internal/problem"
	"boxd/internal/store"
)

// Store keeps each key's domains (*store.Store is one).
type Store interface {
	Challenge(ctx context.Context, keyID, domain, token string, now time.Time) (store.Domain, error)
	Domain(ctx context.Context, keyID, domain string) (store.Domain, error)
	MarkVerified(ctx context.Context, keyID, domain, method string, now time.Time) (store.Domain, error)
	Domains(ctx context.Context, keyID string) ([]store.Domain, error)
}

var _ Store = (*store.Store)(nil)

// Registry is the routes' side of verification: challenges per key,
// checks, and the list.
type Registry struct {
	Store    Store
	Verifier *Verifier
	Now      func() time.Time
}

// View is one of a key's domains as the routes answer it.
type View struct {
	Domain     string       `json:"domain"`
	Verified   bool         `json:"verified"`
	Method     string       `json:"method,omitempty"`
	VerifiedAt *time.Time   `json:"verified_at,omitempty"`
	Token      string       `json:"token"`
	Publish    Instructions `json:"publish"`
	// Covers says which hosts an audit may visit once verified.
	Covers string `json:"covers"`
}

// CheckResult is POST /a11y/domains/check's answer.
type CheckResult struct {
	View
	Checks []Check `json:"checks"`
	// Next says what to do when the domain is not verified yet.
	Next string `json:"next,omitempty"`
}

func (r *Registry) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func view(d store.Domain) View {
	v := View{Domain: d.Domain, Verified: d.Verified(), Method: d.Method, VerifiedAt: d.VerifiedAt, Token: d.Token, Publish: For(d.Domain, d.Token)}
	switch {
	case d.Method == MethodDNS:
		v.Covers = d.Domain + " and every name under it (the DNS record proves the zone)"
	case d.Verified():
		v.Covers = d.Domain + " only (the well-known file proves that host)"
	default:
		v.Covers = "nothing yet: publish the token, then POST /a11y/domains/check"
	}
	return v
}

// Ask gives keyID a challenge for domain (the same token when asked
// again).
func (r *Registry) Ask(ctx context.Context, keyID, domain string) (View, error) {
	d, err := Normalize(domain)
	if err != nil {
		return View{}, err
	}
	rec, err := r.Store.Challenge(ctx, keyID, d, NewToken(), r.now())
	if err != nil {
		return View{}, fmt.Errorf("domains: %w", err)
	}
	return view(rec), nil
}

// Check looks for keyID's published token for domain: 404 when the key
// never asked for one; a domain already verified stays verified.
func (r *Registry) Check(ctx context.Context, keyID, domain string) (CheckResult, error) {
	d, err := Normalize(domain)
	if err != nil {
		return CheckResult{}, err
	}
	rec, err := r.Store.Domain(ctx, keyID, d)
	if errors.Is(err, store.ErrNotFound) {
		return CheckResult{}, problem.New(problem.NotFound, "this key has no challenge for %s: ask for one with POST /a11y/domains {\"domain\": %q} and publish it first", d, d)
	}
	if err != nil {
		return CheckResult{}, fmt.Errorf("domains: %w", err)
	}
	method, checks := r.Verifier.Check(ctx, d, rec.Token)
	if method != "" && !rec.Verified() {
		if rec, err = r.Store.MarkVerified(ctx, keyID, d, method, r.now()); err != nil {
			return CheckResult{}, fmt.Errorf("domains: %w", err)
		}
	}
	out := CheckResult{View: view(rec), Checks: checks}
	if !out.Verified {
		out.Next = "publish the token as a TXT record at " + TXTPrefix + d + " or as the whole body of https://" + d + WellKnownPath + ", then check again (DNS changes can take minutes to show)"
	}
	return out, nil
}

// List is keyID's domains.
func (r *Registry) List(ctx context.Context, keyID string) ([]View, error) {
	ds, err := r.Store.Domains(ctx, keyID)
	if err != nil {
		return nil, fmt.Errorf("domains: %w", err)
	}
	out := make([]View, 0, len(ds))
	for _, d := range ds {
		out = append(out, view(d))
	}
	return out, nil
}

// VerifiedFor is what keyID may audit.
func (r *Registry) VerifiedFor(ctx context.Context, keyID string) ([]Verified, error) {
	ds, err := r.Store.Domains(ctx, keyID)
	if err != nil {
		return nil, fmt.Errorf("domains: %w", err)
	}
	var out []Verified
	for _, d := range ds {
		if d.Verified() {
			out = append(out, Verified{Domain: d.Domain, Method: d.Method})
		}
	}
	return out, nil
}
