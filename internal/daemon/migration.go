package daemon

import (
	"path/filepath"

	"boxd/pipelines/llmcall"
	"boxd/pipelines/migration"
)

// buildMigration makes the migration check: the chat model as the first
// (default) candidate, the operator's (Deps.MigrationCandidates, loaded
// by the command from migration.candidates), the pinned judge
// (migration.judge: the chat model or a candidate), the price table and
// migration.hour_cost.
func (b *Box) buildMigration() {
	cfg, deps := b.cfg, b.deps
	prices := migration.ShippedPrices()
	if deps.MigrationPrices != nil {
		prices = *deps.MigrationPrices
	}
	svc := &migration.Service{Key: deps.Key, Prices: prices, HourDollars: cfg.Migration.HourDollars(), Now: b.now, Log: b.log}
	svc.Candidates = append(svc.Candidates, migration.Candidate{ID: b.Chat.ModelID, Model: b.Chat, File: chatFile(b),
		Note: "the box's chat model (models.llm)"})
	svc.Candidates = append(svc.Candidates, deps.MigrationCandidates...)
	svc.Judge = b.judge()
	b.Migration = svc
}

func chatFile(b *Box) string {
	if p := b.cfg.Models.LLM.Path; p != "" {
		return filepath.Base(p)
	}
	return b.Chat.Upstream
}

// judge is the migration judge: the candidate migration.judge names, else
// the chat model.
func (b *Box) judge() *llmcall.Model {
	for _, c := range b.deps.MigrationCandidates {
		if c.ID == b.cfg.Migration.Judge {
			return c.Model
		}
	}
	return b.Chat
}
