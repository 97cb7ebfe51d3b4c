package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"boxd/configs"
	"boxd/engine/llm"
	"boxd/gpu"
	"boxd/internal/receipts"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/migration"
)

// migrationCandidates loads the open models migration.candidates
// registers (one sequence each, the chat model's context length), and
// checks migration.judge names one of them when set. close frees them.
func migrationCandidates(ctx context.Context, cfg *configs.Config, arbiter *gpu.Arbiter, threads int, provider string, book *receipts.Book, log *slog.Logger) (cands []migration.Candidate, closeAll func(), err error) {
	var engines []*llm.Engine
	closeAll = func() {
		for _, e := range engines {
			e.Close()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	judgeFound := cfg.Migration.Judge == ""
	for _, s := range cfg.Migration.Candidates {
		c, err := configs.ParseMigrationCandidate(s)
		if err != nil {
			return nil, closeAll, fmt.Errorf("migration.candidates (%s): %w", cfg.Source("migration.candidates"), err)
		}
		if c.ID == cfg.Models.LLM.ID {
			return nil, closeAll, fmt.Errorf("migration.candidates: %q is the chat model's id (models.llm.id), which is always a candidate", c.ID)
		}
		notify(log, "STATUS=loading migration candidate "+c.ID)
		e, root, err := loadLLM(ctx, cfg, llmSpec{role: "migration candidate", pool: "llm:" + c.ID, id: c.ID, path: c.Path, template: c.Template,
			contextLength: cfg.Models.LLM.ContextLength, parallel: 1}, arbiter, threads, log)
		if err != nil {
			return nil, closeAll, fmt.Errorf("migration.candidates %s (%s): %w", c.ID, c.Path, err)
		}
		engines = append(engines, e)
		m := &llmcall.Model{Engine: e, ModelID: c.ID, WeightsRoot: root, Upstream: e.Info().Name, Provider: provider, Receipts: book}
		if m.Upstream == "" {
			m.Upstream = filepath.Base(c.Path)
		}
		if err := m.ChatError(); err != nil {
			return nil, closeAll, fmt.Errorf("migration.candidates %s: %w (give its template: id|path|template)", c.ID, err)
		}
		cands = append(cands, migration.Candidate{ID: c.ID, Model: m, File: filepath.Base(c.Path), Note: "registered by the operator (migration.candidates)"})
		judgeFound = judgeFound || c.ID == cfg.Migration.Judge
	}
	if !judgeFound {
		return nil, closeAll, fmt.Errorf("migration.judge (%s): %q is not a migration.candidates id (leave it empty for the chat model)", cfg.Source("migration.judge"), cfg.Migration.Judge)
	}
	return cands, closeAll, nil
}
