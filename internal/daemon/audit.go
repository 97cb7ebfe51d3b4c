package daemon

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"boxd/configs"
	"boxd/internal/version"
	"boxd/pipelines/audit"
	"boxd/pipelines/outbound"
)

// AuditTimeout bounds one probe request's wait for the endpoint's
// headers (a model may think before it streams).
const AuditTimeout = 2 * time.Minute

// buildAudit makes the endpoint audit: its own outbound client (the
// outbound.* ranges and CA, audit.allow_private, longer waits than a page
// fetch), the fixtures under state_dir/audit/references, the operator's
// targets.
func (b *Box) buildAudit() {
	cfg, deps := b.cfg, b.deps
	refs := &audit.References{Dir: filepath.Join(cfg.StateDir, "audit", "references"), Trusted: []ed25519.PublicKey{deps.Key.PublicKey()}}
	if err := refs.Load(); err != nil {
		b.log.Warn("audit references not read", "err", err)
	}
	for file, why := range refs.Errors() {
		b.log.Warn("audit reference left out", "file", file, "why", why)
	}
	svc := &audit.Service{Key: deps.Key, Chat: b.Chat, Refs: refs, AllowPrivate: cfg.Audit.AllowPrivate, Resolver: deps.Resolver,
		Reports: deps.Platform.Store(), Now: b.now, Log: b.log, Software: "boxd " + version.Version}
	for _, s := range cfg.Audit.Targets {
		t, err := configs.ParseAuditTarget(s)
		if err != nil {
			continue // the settings check refused it at load
		}
		svc.Registered = append(svc.Registered, audit.Registered{ID: t.ID, Label: t.Model + " at " + t.BaseURL, BaseURL: t.BaseURL,
			Model: t.Model, ClaimedModel: t.ClaimedModel, Note: "registered by the operator (audit.targets)"})
	}
	p, err := outbound.PolicyFromSettings(cfg.Audit.AllowPrivate, cfg.Outbound.AllowCIDRs, cfg.Outbound.CAFile, "boxd-audit/"+version.Version)
	if err != nil {
		b.AuditErr = err
	} else {
		p.Timeout = AuditTimeout
		svc.Poster = outbound.New(p)
	}
	b.Audit = svc
}

var fixtureIDChars = regexp.MustCompile(`[^a-z0-9._-]+`)

// RecordAuditReference records a fixture of the chat model when the box
// has none (audit.record_at_start), logging how long it took. It returns
// at once when there is nothing to do.
func (b *Box) RecordAuditReference(ctx context.Context) {
	m := b.Chat
	if !b.cfg.Audit.RecordAtStart || !m.Ready() || b.Audit.Refs.Find(m.ModelID) != nil {
		return
	}
	id := strings.Trim(fixtureIDChars.ReplaceAllString(strings.ToLower(m.ModelID), "-"), "-.")
	if len(id) > 64 {
		id = id[:64]
	}
	aliases := append([]string{}, m.Aliases...)
	if m.Upstream != "" && m.Upstream != m.ModelID {
		aliases = append(aliases, m.Upstream)
	}
	start := time.Now()
	b.log.Info("recording the audit reference fixture of the chat model", "model", m.ModelID, "probes", len(audit.DefaultSuite().Probes))
	fx, err := audit.RecordModel(ctx, m, audit.Recording{ID: id, Aliases: aliases, Model: m.ModelID, Weights: m.WeightsRoot,
		Engine: "boxd " + version.Version + " (llama.cpp in process)", Runs: 3, Batched: b.chatSequences() >= 2, Now: b.now}, b.deps.Key)
	if err == nil {
		err = b.Audit.Refs.Add(fx)
	}
	if err != nil {
		b.log.Warn("audit reference fixture not recorded", "model", m.ModelID, "err", err)
		return
	}
	b.log.Info("audit reference fixture recorded", "id", fx.ID, "seconds", time.Since(start).Round(time.Millisecond).Seconds())
}
