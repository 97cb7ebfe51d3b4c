package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models"
	"boxd/gpu"
	"boxd/internal/version"
	"boxd/pipelines/audit"
	"boxd/pipelines/llmcall"
)

func newAudit() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Endpoint audit: record reference fixtures"}
	var id, out, template string
	var aliases []string
	var runs, parallel int
	rec := &cobra.Command{
		Use:   "record MODEL.gguf",
		Short: "Record a signed reference fixture of a model file for the endpoint audit",
		Long: `Runs the audit's probe suite (` + audit.SuiteID + `) on MODEL.gguf with boxd's engine
and writes a fixture signed by this box's key: every probe's answer with its
logprobs, the quality it scored, and the noise measured over --runs runs of the
goldens and canaries (other seeds; with --parallel 2 or more, one run batches
two probes at once). Audits claiming --id or an --alias are compared with it.

The fixture goes to state_dir/audit/references (or --out); a running box
reads new fixtures there on its next audit. Record on the stack you trust
(the weights you bought, from the publisher): a small model takes seconds on
a CPU (the 0.5 MB test model: 2 s on 2 CPUs); with gpu.layers the GPU does the work.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return configError{err}
			}
			path := args[0]
			if id == "" {
				id = strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".gguf")
			}
			if out == "" {
				out = filepath.Join(cfg.StateDir, "audit", "references")
			}
			key, _, err := attest.LoadOrCreateKey(cfg.StateDir)
			if err != nil {
				return configError{fmt.Errorf("the box's key (state_dir %s): %w", cfg.StateDir, err)}
			}
			var tmpl models.Template
			if template != "auto" {
				tmpl = models.Template(template)
			}
			ctx := cmd.Context()
			layers := cfg.GPU.Layers
			if len(gpu.GPUs()) == 0 {
				layers = 0
			}
			e, err := llm.Open(ctx, llm.EngineOptions{Options: llm.Options{Path: path, ContextLength: 4096, Parallel: max(1, parallel),
				GPULayers: layers}, Template: tmpl})
			if err != nil {
				return configError{fmt.Errorf("%s: %w", path, err)}
			}
			defer e.Close()
			wr, err := models.WeightsRootOf(path)
			if err != nil {
				return err
			}
			root := wr.Root
			m := &llmcall.Model{Engine: e, ModelID: id, Aliases: aliases, WeightsRoot: root, Upstream: filepath.Base(path), Provider: key.ID(), Receipts: audit.SignOnly{Key: key}}
			start := time.Now()
			fmt.Fprintf(cmd.ErrOrStderr(), "recording %s: %d probes, then %d more runs of the goldens and canaries\n", id, len(audit.DefaultSuite().Probes), max(2, runs)-1)
			fx, err := audit.RecordModel(ctx, m, audit.Recording{ID: id, Aliases: aliases, Model: id, Weights: root,
				Engine: "boxd " + version.Version + " (llama.cpp in process)", Runs: runs, Batched: parallel >= 2}, key)
			if err != nil {
				return err
			}
			refs := &audit.References{Dir: out, Trusted: nil}
			if err := os.MkdirAll(out, 0o700); err != nil {
				return err
			}
			refs.Trusted = append(refs.Trusted, key.PublicKey())
			if err := refs.Add(fx); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s in %.1f s: noise |Δ logprob| %s, identical %s; fixture_sha256 %s\n",
				filepath.Join(out, fx.ID+".json"), time.Since(start).Seconds(), fx.Noise.LogprobDelta, fx.Noise.Exact, fx.FixtureSHA256)
			return nil
		},
	}
	rec.Flags().StringVar(&id, "id", "", "the fixture's id and model name (default: the file name without .gguf)")
	rec.Flags().StringSliceVar(&aliases, "alias", nil, "another name audits may claim (repeat or comma-separate)")
	rec.Flags().StringVar(&out, "out", "", "directory to write to (default: state_dir/audit/references)")
	rec.Flags().StringVar(&template, "template", "auto", "chat template family: auto, gemma, llama3, chatml, mistral")
	rec.Flags().IntVar(&runs, "runs", 3, "runs of the goldens and canaries (the first is the reference, the rest measure the noise)")
	rec.Flags().IntVar(&parallel, "parallel", 2, "sequences the engine runs at once (2 or more: one noise run batches two probes)")
	configs.RegisterFileFlags(rec.Flags())
	cmd.AddCommand(rec)
	return cmd
}
