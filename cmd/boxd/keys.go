package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"boxd/cmd/boxd/cli"
	"boxd/configs"
	"boxd/internal/platform"
	"boxd/internal/store"
)

// The key commands use the daemon's database directly. That is safe while
// the daemon runs: SQLite (WAL, busy timeout) serialises the two processes'
// writes, and the daemon reads a key from the database on every request, so
// a revocation here takes effect on its next request (docs/decisions.md).
func newKeys() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Create, show, list and revoke developer keys (the same store as /v1/keys)",
	}
	configs.RegisterFileFlags(cmd.PersistentFlags())
	cmd.AddCommand(newKeysCreate(), newKeysShow(), newKeysList(), newKeysRevoke())
	return cmd
}

// withPlatform opens the store named by the configuration. Only keys
// create makes one where none is (mayCreate, saying so on stderr).
func withPlatform(cmd *cobra.Command, mayCreate bool, f func(ctx context.Context, p *platform.Platform) error) error {
	cfg, err := configs.Load(cmd.Flags())
	if err != nil {
		return configError{err}
	}
	// The keys live in a box's state: a command run where no box has
	// run (a clone, a wrong --state-dir) says so instead of making an
	// empty store there.
	if _, err := os.Stat(filepath.Join(cfg.StateDir, store.File)); errors.Is(err, fs.ErrNotExist) {
		if !mayCreate {
			return configError{fmt.Errorf("state_dir %s (%s) holds no boxd state (no %s): boxd serve has not run with it; pass the box's --state-dir or --config, or start boxd serve once", cfg.StateDir, cfg.Source("state_dir"), store.File)}
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "boxd: no store in %s yet: creating %s there (boxd serve with this state_dir uses it)\n", cfg.StateDir, store.File)
	}
	st, err := store.Open(cmd.Context(), cfg.StateDir)
	if err != nil {
		return err
	}
	defer st.Close()
	return f(cmd.Context(), platform.New(cfg, st, nil))
}

func newKeysCreate() *cobra.Command {
	var (
		label, verticals, plan   string
		tokens, audio, rpm, live int64
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a developer key and print it (shown once)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec := platform.KeySpec{}
			f := cmd.Flags()
			if f.Changed("label") {
				spec.Label = &label
			}
			if f.Changed("plan") {
				spec.Plan = &plan
			}
			if f.Changed("verticals") {
				var raw []byte
				if strings.TrimSpace(verticals) == "all" {
					raw, _ = json.Marshal("all")
				} else {
					list := []string{}
					for _, v := range strings.Split(verticals, ",") {
						if v = strings.TrimSpace(v); v != "" {
							list = append(list, v)
						}
					}
					raw, _ = json.Marshal(list)
				}
				spec.Verticals = raw
			}
			for name, dst := range map[string]**int64{"daily-llm-tokens": &spec.DailyLLMTokens, "daily-audio-seconds": &spec.DailyAudioSeconds,
				"requests-per-minute": &spec.RequestsPerMinute, "concurrent-live-sessions": &spec.ConcurrentLiveSessions} {
				if f.Changed(name) {
					v, _ := f.GetInt64(name)
					*dst = &v
				}
			}
			return withPlatform(cmd, true, func(ctx context.Context, p *platform.Platform) error {
				secret, k, d := p.CreateKey(ctx, spec)
				if d != nil {
					return d
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "boxd: the key is shown once; store it now (only its SHA-256 is kept)")
				return cli.PrintJSON(cmd.OutOrStdout(), platform.KeyCreated{Key: secret, KeyID: k.ID, Created: k.Created.Unix(),
					Label: k.Label, Plan: k.Plan, Limits: platform.ViewLimits(k.Limits)})
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&label, "label", "", "a label for the key")
	f.StringVar(&verticals, "verticals", "all", `"all" or a comma-separated list of vertical ids`)
	f.StringVar(&plan, "plan", "free", "plan name (reserved for billing)")
	f.Int64Var(&tokens, "daily-llm-tokens", platform.DefaultDailyLLMTokens, "generated tokens per UTC day")
	f.Int64Var(&audio, "daily-audio-seconds", platform.DefaultDailyAudioSeconds, "audio seconds per UTC day")
	f.Int64Var(&rpm, "requests-per-minute", platform.DefaultRequestsPerMinute, "requests per minute")
	f.Int64Var(&live, "concurrent-live-sessions", platform.DefaultConcurrentLiveSessions, "live sessions at once")
	return cmd
}

func newKeysShow() *cobra.Command {
	return &cobra.Command{
		Use:   "show KEY_ID",
		Short: "Print a key's record: limits, today's use and 30 days of history",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withPlatform(cmd, false, func(ctx context.Context, p *platform.Platform) error {
				rec, d := p.KeyRecord(ctx, args[0])
				if d != nil {
					return d
				}
				return cli.PrintJSON(cmd.OutOrStdout(), rec)
			})
		},
	}
}

func newKeysList() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withPlatform(cmd, false, func(ctx context.Context, p *platform.Platform) error {
				keys, err := p.Store().ListKeys(ctx)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "KEY_ID\tLABEL\tPLAN\tCREATED\tREVOKED\tTOKENS_TODAY")
				today := platform.Day(time.Now())
				for _, k := range keys {
					u, err := p.Store().UsageOn(ctx, k.ID, today)
					if err != nil {
						return err
					}
					revoked := "-"
					if k.RevokedAt != nil {
						revoked = k.RevokedAt.Format(time.RFC3339)
					}
					// A label from an older database may hold control characters: quoted.
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\n", k.ID, platform.Printable(k.Label), k.Plan, k.Created.Format(time.RFC3339), revoked, u.LLMTokens, k.Limits.DailyLLMTokens)
				}
				return tw.Flush()
			})
		},
	}
}

func newKeysRevoke() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke a key now (a running boxd refuses it from its next request and ends sessions open with it within 2 s)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withPlatform(cmd, false, func(ctx context.Context, p *platform.Platform) error {
				k, d := p.RevokeKey(ctx, args[0])
				if d != nil {
					return d
				}
				return cli.PrintJSON(cmd.OutOrStdout(), map[string]any{"key_id": k.ID, "revoked": true})
			})
		},
	}
}
